alter table messages drop column extracted_html;
