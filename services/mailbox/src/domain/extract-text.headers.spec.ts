/**
 * Outlook's header blocks (desktop, web, mobile, Mac and the new Outlook) in the 21 languages of
 * issue 29, as each localisation names its fields, in the shapes they reach us: under a rule or
 * an "-----Original Message-----" separator, with or without addresses, with tabs or Word's
 * bold stars, with "Date" for "Sent", and as Outlook web's HTML. New text above is kept, the
 * history below goes; a block whose subject says forward ("FW:", "WG:", "TR:") keeps what it
 * forwards. Outlook's names are data here on purpose: a test of the clients' formats, not of
 * the table in extract-text.languages.ts.
 */
import { extractText } from './extract-text';

interface Outlook {
  from: string;
  sent: string;
  date: string;
  to: string;
  cc: string;
  subject: string;
  original: string;
  forward?: string;
}

const OUTLOOK: Record<string, Outlook> = {
  en: { from: 'From', sent: 'Sent', date: 'Date', to: 'To', cc: 'Cc', subject: 'Subject', original: 'Original Message', forward: 'FW' },
  de: { from: 'Von', sent: 'Gesendet', date: 'Datum', to: 'An', cc: 'Cc', subject: 'Betreff', original: 'Ursprüngliche Nachricht', forward: 'WG' },
  fr: { from: 'De', sent: 'Envoyé', date: 'Date', to: 'À', cc: 'Cc', subject: 'Objet', original: "Message d'origine", forward: 'TR' },
  es: { from: 'De', sent: 'Enviado el', date: 'Fecha', to: 'Para', cc: 'CC', subject: 'Asunto', original: 'Mensaje original', forward: 'RV' },
  it: { from: 'Da', sent: 'Inviato', date: 'Data', to: 'A', cc: 'Cc', subject: 'Oggetto', original: 'Messaggio originale', forward: 'I' },
  pt: { from: 'De', sent: 'Enviada em', date: 'Data', to: 'Para', cc: 'Cc', subject: 'Assunto', original: 'Mensagem original', forward: 'ENC' },
  nl: { from: 'Van', sent: 'Verzonden', date: 'Datum', to: 'Aan', cc: 'CC', subject: 'Onderwerp', original: 'Oorspronkelijk bericht', forward: 'FW' },
  da: { from: 'Fra', sent: 'Sendt', date: 'Dato', to: 'Til', cc: 'Cc', subject: 'Emne', original: 'Oprindelig meddelelse' },
  nb: { from: 'Fra', sent: 'Sendt', date: 'Dato', to: 'Til', cc: 'Kopi', subject: 'Emne', original: 'Opprinnelig melding' },
  sv: { from: 'Från', sent: 'Skickat', date: 'Datum', to: 'Till', cc: 'Kopia', subject: 'Ämne', original: 'Ursprungligt meddelande', forward: 'VB' },
  fi: { from: 'Lähettäjä', sent: 'Lähetetty', date: 'Päivämäärä', to: 'Vastaanottaja', cc: 'Kopio', subject: 'Aihe', original: 'Alkuperäinen viesti', forward: 'VL' },
  pl: { from: 'Od', sent: 'Wysłano', date: 'Data', to: 'Do', cc: 'DW', subject: 'Temat', original: 'Wiadomość oryginalna', forward: 'PD' },
  cs: { from: 'Od', sent: 'Odesláno', date: 'Datum', to: 'Komu', cc: 'Kopie', subject: 'Předmět', original: 'Původní zpráva', forward: 'FW' },
  ru: { from: 'От', sent: 'Отправлено', date: 'Дата', to: 'Кому', cc: 'Копия', subject: 'Тема', original: 'Исходное сообщение', forward: 'FW' },
  uk: { from: 'Від', sent: 'Надіслано', date: 'Дата', to: 'Кому', cc: 'Копія', subject: 'Тема', original: 'Оригінальне повідомлення', forward: 'FW' },
  tr: { from: 'Kimden', sent: 'Gönderildi', date: 'Tarih', to: 'Kime', cc: 'Bilgi', subject: 'Konu', original: 'Özgün İleti', forward: 'İLT' },
  ja: { from: '差出人', sent: '送信日時', date: '日付', to: '宛先', cc: 'CC', subject: '件名', original: '元のメッセージ', forward: 'FW' },
  zh: { from: '发件人', sent: '发送时间', date: '日期', to: '收件人', cc: '抄送', subject: '主题', original: '原始邮件', forward: '转发' },
  ko: { from: '보낸 사람', sent: '보낸 날짜', date: '날짜', to: '받는 사람', cc: '참조', subject: '제목', original: '원본 메시지', forward: 'FW' },
  ar: { from: 'من', sent: 'تم الإرسال', date: 'التاريخ', to: 'إلى', cc: 'نسخة', subject: 'الموضوع', original: 'الرسالة الأصلية' },
  he: { from: 'מאת', sent: 'נשלח', date: 'תאריך', to: 'אל', cc: 'עותק', subject: 'נושא', original: 'הודעה מקורית' },
};

const WHEN = 'Monday, March 20, 2017 10:00 AM';
const NEW = 'Thanks, done.\n\nAnn';
const HISTORY = 'Can you check the numbers?';

type Shape = (o: Outlook) => string;
const SHAPES: Record<string, Shape> = {
  'desktop, under a rule': (o) =>
    `${NEW}\n\n________________________________\n${o.from}: John Smith <john@example.com>\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee <ann@example.com>\n${o.cc}: Team <team@example.com>\n${o.subject}: RE: Numbers\n\n${HISTORY}`,
  'desktop, no addresses': (o) => `${NEW}\n\n${o.from}: John Smith\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee\n${o.subject}: RE: Numbers\n\n${HISTORY}`,
  'under its separator, with [mailto:]': (o) =>
    `${NEW}\n\n-----${o.original}-----\n${o.from}: John Smith [mailto:john@example.com]\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee\n${o.subject}: Numbers\n\n${HISTORY}`,
  'tabs after the names': (o) => `${NEW}\n\n${o.from}:\tJohn Smith <john@example.com>\n${o.sent}:\t${WHEN}\n${o.to}:\tAnn Lee\n${o.subject}:\tNumbers\n\n${HISTORY}`,
  "Word's bold stars, a space before the colon": (o) =>
    `${NEW}\n\n*${o.from} :* John Smith <john@example.com>\n*${o.sent} :* ${WHEN}\n*${o.to} :* Ann Lee\n*${o.subject} :* Numbers\n\n${HISTORY}`,
  'Mac and the new Outlook (Date)': (o) =>
    `${NEW}\n\n${o.from}: John Smith <john@example.com>\n${o.date}: ${WHEN}\n${o.to}: Ann Lee <ann@example.com>\n${o.subject}: Numbers\n\n${HISTORY}`,
};

// How the blocks reach us besides: glued to the text, under a signature's phone line, with a To
// list wrapped, fields a blank line apart (HTML paragraphs), CRLF, GMX's date first, quoted
// above a bottom-posted answer, short (no subject, no address; From and Date alone), a no-break
// space or a fullwidth colon after the name, indented, in capitals.
const VARIANTS: Record<string, [make: (o: Outlook) => string, expected: string]> = {
  'no blank line above': [(o) => `Thanks, done.\nAnn\n${o.from}: John Smith <john@example.com>\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee\n${o.subject}: Numbers\n\n${HISTORY}`, 'Thanks, done.\nAnn'],
  'under a phone line': [
    (o) => `Thanks, done.\nAnn\nTel: +1 555 0100\n\n${o.from}: John Smith <john@example.com>\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee\n${o.subject}: Numbers\n\n${HISTORY}`,
    'Thanks, done.\nAnn\nTel: +1 555 0100',
  ],
  'a wrapped To list': [
    (o) =>
      `${NEW}\n\n${o.from}: John Smith <john@example.com>\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee <ann@example.com>; Bob Stone <bob@example.com>;\n Carl Diaz <carl@example.com>\n${o.cc}: Team <team@example.com>\n${o.subject}: Numbers\n\n${HISTORY}`,
    NEW,
  ],
  'fields a blank line apart': [(o) => `${NEW}\n\n${o.from}: John Smith <john@example.com>\n\n${o.sent}: ${WHEN}\n\n${o.to}: Ann Lee\n\n${o.subject}: Numbers\n\n${HISTORY}`, NEW],
  CRLF: [(o) => `${NEW}\r\n\r\n${o.from}: John Smith <john@example.com>\r\n${o.sent}: ${WHEN}\r\n${o.to}: Ann Lee\r\n${o.subject}: Numbers\r\n\r\n${HISTORY}`, NEW],
  'the date first': [(o) => `${NEW}\n\n${o.date}: ${WHEN}\n${o.from}: John Smith <john@example.com>\n${o.to}: Ann Lee\n${o.subject}: Numbers\n\n${HISTORY}`, NEW],
  'quoted, the answer below': [(o) => `> ${o.from}: John Smith <john@example.com>\n> ${o.sent}: ${WHEN}\n> ${o.to}: Ann Lee\n> ${o.subject}: Numbers\n>\n> ${HISTORY}\n\n${NEW}`, NEW],
  'no subject, no address': [(o) => `${NEW}\n\n${o.from}: John Smith\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee\n\n${HISTORY}`, NEW],
  'From and Date alone': [(o) => `${NEW}\n\n${o.from}: John Smith\n${o.date}: ${WHEN}\n\n${HISTORY}`, NEW],
  'a no-break space before the colon': [(o) => `${NEW}\n\n${o.from}\u00a0: John Smith <john@example.com>\n${o.sent}\u00a0: ${WHEN}\n${o.to}\u00a0: Ann Lee\n${o.subject}\u00a0: Numbers\n\n${HISTORY}`, NEW],
  'fullwidth colons': [(o) => `${NEW}\n\n${o.from}：John Smith <john@example.com>\n${o.sent}：${WHEN}\n${o.to}：Ann Lee\n${o.subject}：Numbers\n\n${HISTORY}`, NEW],
  indented: [(o) => `${NEW}\n\n   ${o.from}: John Smith <john@example.com>\n   ${o.sent}: ${WHEN}\n   ${o.to}: Ann Lee\n   ${o.subject}: Numbers\n\n${HISTORY}`, NEW],
  capitals: [
    (o) => `${NEW}\n\n${o.from.toUpperCase()}: John Smith <john@example.com>\n${o.sent.toUpperCase()}: ${WHEN}\n${o.to.toUpperCase()}: Ann Lee\n${o.subject.toUpperCase()}: Numbers\n\n${HISTORY}`,
    NEW,
  ],
};

const html = (o: Outlook) =>
  '<html><body><div>Thanks, done.</div><div>Ann</div><hr style="display:inline-block;width:98%" tabindex="-1">' +
  `<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" color="#000000"><b>${o.from}:</b> John Smith &lt;john@example.com&gt;<br>` +
  `<b>${o.sent}:</b> ${WHEN}<br><b>${o.to}:</b> Ann Lee &lt;ann@example.com&gt;<br><b>${o.subject}:</b> Numbers</font><div>&nbsp;</div></div>` +
  `<div>${HISTORY}</div></body></html>`;

const cases = Object.entries(OUTLOOK).flatMap(([lang, o]) => Object.entries(SHAPES).map(([shape, make]) => ({ lang, shape, text: make(o) })));

describe("Outlook's header blocks", () => {
  it.each(cases)('$lang, $shape', ({ text }) => {
    expect(extractText({ text })).toBe(NEW);
  });

  it.each(Object.entries(OUTLOOK).flatMap(([lang, o]) => Object.entries(VARIANTS).map(([variant, [make, expected]]) => ({ lang, variant, text: make(o), expected }))))(
    '$lang, $variant',
    ({ text, expected }) => {
      expect(extractText({ text })).toBe(expected);
    },
  );

  it.each(Object.entries(OUTLOOK))("%s, Outlook web's HTML", (_lang, o) => {
    expect(extractText({ html: html(o) })).toBe('Thanks, done.\nAnn');
  });

  it.each(Object.entries(OUTLOOK).filter(([, o]) => o.forward))('%s, a forward keeps what it forwards', (_lang, o) => {
    const forward = `${o.from}: John Smith <john@example.com>\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee\n${o.subject}: ${o.forward}: Numbers\n\n${HISTORY}`;
    expect(extractText({ text: `Please handle this.\n\n${forward}` })).toBe(`Please handle this.\n\n${forward}`);
  });

  // Outlook forwards with the forwarded mail's own block, which reads as a reply's history: the
  // message's own subject tells them apart, when it is known.
  it.each(Object.entries(OUTLOOK).filter(([, o]) => o.forward))("%s, the message's subject decides forward or reply", (_lang, o) => {
    const block = `${o.from}: John Smith <john@example.com>\n${o.sent}: ${WHEN}\n${o.to}: Ann Lee\n${o.subject}: Numbers\n\n${HISTORY}`;
    const text = `Please handle this.\n\n-----${o.original}-----\n${block}`;
    expect(extractText({ text, subject: `${o.forward}: Numbers` })).toBe(text);
    expect(extractText({ text: `Please handle this.\n\n${block}`, subject: `${o.forward}: Numbers` })).toBe(`Please handle this.\n\n${block}`);
    expect(extractText({ text })).toBe('Please handle this.');
    // A reply to a forward: the block's own "FW:" subject does not make it one.
    const answered = `Please handle this.\n\n${block.replace(`${o.subject}: Numbers`, `${o.subject}: ${o.forward}: Numbers`)}`;
    expect(extractText({ text: answered, subject: `RE: ${o.forward}: Numbers` })).toBe('Please handle this.');
    expect(extractText({ text: answered })).toBe(answered);
  });
});
