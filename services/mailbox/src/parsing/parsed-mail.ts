/** What a parse worker returns: plain data, structured-clone safe. */
export interface ParsedAddress {
  address: string;
  name: string;
}

export interface ParsedAttachment {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
  disposition: string | null;
  checksum: string;
  content: Uint8Array;
}

export interface ParsedMail {
  subject: string;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  from: ParsedAddress | null;
  reply_to: ParsedAddress[];
  to: ParsedAddress[];
  cc: ParsedAddress[];
  text: string;
  html: string;
  extracted_text: string | null;
  /** The HTML part without quoted history, sanitized; null without an HTML part or when it could not be computed. */
  extracted_html: string | null;
  attachments: ParsedAttachment[];
  /** Why only part of the message could be read; null when fully parsed. */
  error: string | null;
}
