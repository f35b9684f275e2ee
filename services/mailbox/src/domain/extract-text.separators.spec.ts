/**
 * "Original message" and forwarded-message separators as the clients write them, per language
 * (Outlook, Samsung Email, Zimbra, Proton, eM Client, T-Online, Seznam, Mail.ru, Yandex, QQ;
 * Gmail's, Thunderbird's and Apple Mail's forwards). Below an "original" one everything is
 * history; a forward's is kept whole with what it forwards (docs/decisions.md, extract-text).
 */
import { extractText } from './extract-text';

const SEPARATORS: [lang: string, kind: 'original' | 'forward', client: string, line: string][] = [
  ['en', 'original', 'outlook', '-----Original Message-----'],
  ['en', 'original', 'samsung', '-------- Original message --------'],
  ['en', 'original', 'zimbra', '----- Original Message -----'],
  ['en', 'original', 'proton', '------- Original Message -------'],
  ['en', 'original', 'em-client', '------ Original Message ------'],
  ['en', 'forward', 'gmail', '---------- Forwarded message ---------'],
  ['en', 'forward', 'thunderbird', '-------- Forwarded Message --------'],
  ['en', 'forward', 'apple', 'Begin forwarded message:'],
  ['en', 'forward', 'yahoo', '----- Forwarded Message -----'],
  ['en', 'forward', 'proton', '------- Forwarded Message -------'],
  ['de', 'original', 'outlook', '-----Ursprüngliche Nachricht-----'],
  ['de', 'original', 'samsung', '-------- Ursprüngliche Nachricht --------'],
  ['de', 'original', 'zimbra', '----- Ursprüngliche Mail -----'],
  ['de', 'original', 't-online', '-----Original-Nachricht-----'],
  ['de', 'original', 'proton', '------- Original-Nachricht -------'],
  ['de', 'forward', 'gmail', '---------- Weitergeleitete Nachricht ---------'],
  ['de', 'forward', 'thunderbird', '-------- Weitergeleitete Nachricht --------'],
  ['de', 'forward', 'apple', 'Anfang der weitergeleiteten Nachricht:'],
  ['fr', 'original', 'outlook', '-----Message d\'origine-----'],
  ['fr', 'original', 'samsung', '-------- Message d\'origine --------'],
  ['fr', 'original', 'zimbra', '----- Mail original -----'],
  ['fr', 'forward', 'gmail', '---------- Message transféré ---------'],
  ['fr', 'forward', 'thunderbird', '-------- Message transféré --------'],
  ['fr', 'forward', 'apple', 'Début du message réexpédié :'],
  ['fr', 'forward', 'zimbra', '----- Mail transféré -----'],
  ['es', 'original', 'outlook', '-----Mensaje original-----'],
  ['es', 'original', 'samsung', '-------- Mensaje original --------'],
  ['es', 'forward', 'gmail', '---------- Mensaje reenviado ---------'],
  ['es', 'forward', 'thunderbird', '-------- Mensaje reenviado --------'],
  ['es', 'forward', 'apple', 'Inicio del mensaje reenviado:'],
  ['it', 'original', 'outlook', '-----Messaggio originale-----'],
  ['it', 'original', 'samsung', '-------- Messaggio originale --------'],
  ['it', 'forward', 'gmail', '---------- Messaggio inoltrato ---------'],
  ['it', 'forward', 'thunderbird', '-------- Messaggio Inoltrato --------'],
  ['it', 'forward', 'apple', 'Inizio messaggio inoltrato:'],
  ['pt', 'original', 'outlook', '-----Mensagem original-----'],
  ['pt', 'original', 'samsung', '-------- Mensagem original --------'],
  ['pt', 'forward', 'gmail', '---------- Mensagem encaminhada ---------'],
  ['pt', 'forward', 'thunderbird', '-------- Mensagem encaminhada --------'],
  ['pt', 'forward', 'apple-br', 'Começo da mensagem encaminhada:'],
  ['pt', 'forward', 'apple-pt', 'Início da mensagem reencaminhada:'],
  ['nl', 'original', 'outlook', '-----Oorspronkelijk bericht-----'],
  ['nl', 'original', 'samsung', '-------- Oorspronkelijk bericht --------'],
  ['nl', 'forward', 'gmail', '---------- Doorgestuurd bericht ---------'],
  ['nl', 'forward', 'thunderbird', '-------- Doorgestuurd bericht --------'],
  ['nl', 'forward', 'apple', 'Begin doorgestuurd bericht:'],
  ['da', 'original', 'outlook', '-----Oprindelig meddelelse-----'],
  ['da', 'original', 'samsung', '-------- Oprindelig meddelelse --------'],
  ['da', 'forward', 'gmail', '---------- Videresendt meddelelse ----------'],
  ['da', 'forward', 'thunderbird', '-------- Videresendt besked --------'],
  ['da', 'forward', 'apple', 'Start på videresendt besked:'],
  ['nb', 'original', 'outlook', '-----Opprinnelig melding-----'],
  ['nb', 'original', 'samsung', '-------- Opprinnelig melding --------'],
  ['nb', 'forward', 'gmail', '---------- Videresendt melding ----------'],
  ['nb', 'forward', 'thunderbird', '-------- Videresendt melding --------'],
  ['nb', 'forward', 'apple', 'Videresendt melding:'],
  ['sv', 'original', 'outlook', '-----Ursprungligt meddelande-----'],
  ['sv', 'original', 'samsung', '-------- Originalmeddelande --------'],
  ['sv', 'forward', 'gmail', '---------- Vidarebefordrat meddelande ---------'],
  ['sv', 'forward', 'thunderbird', '-------- Vidarebefordrat meddelande --------'],
  ['sv', 'forward', 'apple', 'Vidarebefordrat brev:'],
  ['fi', 'original', 'outlook', '-----Alkuperäinen viesti-----'],
  ['fi', 'original', 'samsung', '-------- Alkuperäinen viesti --------'],
  ['fi', 'forward', 'gmail', '---------- Välitetty viesti ----------'],
  ['fi', 'forward', 'thunderbird', '-------- Välitetty viesti --------'],
  ['fi', 'forward', 'apple', 'Välitetty viesti alkaa:'],
  ['pl', 'original', 'outlook', '-----Wiadomość oryginalna-----'],
  ['pl', 'original', 'samsung', '-------- Oryginalna wiadomość --------'],
  ['pl', 'forward', 'gmail', '---------- Przekazana wiadomość ---------'],
  ['pl', 'forward', 'thunderbird', '-------- Przekazana wiadomość --------'],
  ['pl', 'forward', 'apple', 'Początek przekazywanej wiadomości:'],
  ['cs', 'original', 'outlook', '-----Původní zpráva-----'],
  ['cs', 'original', 'seznam', '---------- Původní e-mail ----------'],
  ['cs', 'forward', 'gmail', '---------- Přeposlaná zpráva ---------'],
  ['cs', 'forward', 'thunderbird', '-------- Přeposlaná zpráva --------'],
  ['cs', 'forward', 'apple', 'Začátek přeposlané zprávy:'],
  ['ru', 'original', 'outlook', '-----Исходное сообщение-----'],
  ['ru', 'original', 'samsung', '-------- Исходное сообщение --------'],
  ['ru', 'original', 'mailru', '-------- Оригинальное сообщение --------'],
  ['ru', 'forward', 'gmail', '---------- Пересылаемое сообщение ---------'],
  ['ru', 'forward', 'thunderbird', '-------- Пересылаемое сообщение --------'],
  ['ru', 'forward', 'apple', 'Начало переадресованного сообщения:'],
  ['ru', 'forward', 'yandex', '-------- Начало пересылаемого сообщения --------'],
  ['uk', 'original', 'outlook', '-----Оригінальне повідомлення-----'],
  ['uk', 'original', 'outlook-2', '-----Початкове повідомлення-----'],
  ['uk', 'forward', 'gmail', '---------- Переслане повідомлення ---------'],
  ['uk', 'forward', 'thunderbird', '-------- Переслане повідомлення --------'],
  ['tr', 'original', 'outlook', '-----Özgün İleti-----'],
  ['tr', 'original', 'samsung', '-------- Orijinal mesaj --------'],
  ['tr', 'forward', 'gmail', '---------- Yönlendirilmiş mesaj ---------'],
  ['tr', 'forward', 'thunderbird', '-------- İletilen Mesaj --------'],
  ['ja', 'original', 'outlook', '-----元のメッセージ-----'],
  ['ja', 'original', 'samsung', '-------- オリジナルメッセージ --------'],
  ['ja', 'forward', 'gmail', '---------- 転送されたメッセージ ----------'],
  ['ja', 'forward', 'thunderbird', '-------- 転送メッセージ --------'],
  ['ja', 'forward', 'apple', '転送されたメッセージ:'],
  ['zh', 'original', 'outlook', '-----原始邮件-----'],
  ['zh', 'original', 'qq', '------------------ 原始邮件 ------------------'],
  ['zh', 'original', 'outlook-tw', '-----原始郵件-----'],
  ['zh', 'forward', 'gmail', '---------- 转发的邮件 ---------'],
  ['zh', 'forward', 'thunderbird', '-------- 转发的消息 --------'],
  ['zh', 'forward', 'apple', '以下是转发的邮件：'],
  ['zh', 'forward', 'apple-tw', '轉寄的郵件：'],
  ['ko', 'original', 'outlook', '-----원본 메시지-----'],
  ['ko', 'original', 'samsung', '-------- 원본 메시지 --------'],
  ['ko', 'forward', 'gmail', '---------- 전달된 메일 ----------'],
  ['ko', 'forward', 'thunderbird', '-------- 전달된 메시지 --------'],
  ['ko', 'forward', 'apple', '전달된 메시지:'],
  ['ar', 'original', 'outlook', '-----الرسالة الأصلية-----'],
  ['ar', 'original', 'samsung', '-------- الرسالة الأصلية --------'],
  ['ar', 'forward', 'gmail', '---------- الرسالة المعاد توجيهها ---------'],
  ['ar', 'forward', 'apple', 'بداية الرسالة المُعاد توجيهها:'],
  ['he', 'original', 'outlook', '-----הודעה מקורית-----'],
  ['he', 'original', 'outlook-2', '-----Original Message-----'],
  ['he', 'forward', 'gmail', '---------- הודעה שהועברה ----------'],
  ['he', 'forward', 'apple', 'תחילת הודעה שהועברה:'],
];

const HEADER = 'From: John Smith <john@example.com>\nDate: Mon, 20 Mar 2017 10:00:00 +0100\nSubject: Numbers\nTo: Ann Lee <ann@example.com>';
const BODY = 'Can you check the numbers?';

describe('original and forwarded-message separators', () => {
  it.each(SEPARATORS)('%s %s, %s: %s, above a header block', (_lang, kind, _client, line) => {
    const text = `Ok\n\n${line}\n${HEADER}\n\n${BODY}`;
    expect(extractText({ text })).toBe(kind === 'forward' ? text : 'Ok');
  });

  it.each(SEPARATORS.filter(([, kind]) => kind === 'original'))('%s %s, %s: %s, above the text alone', (_lang, _kind, _client, line) => {
    expect(extractText({ text: `Ok\n\n${line}\n\n${BODY}` })).toBe('Ok');
  });

  it.each(SEPARATORS.filter(([, kind]) => kind === 'forward'))('%s %s, %s: %s, below a device line', (_lang, _kind, _client, line) => {
    const forward = `${line}\n${HEADER}\n\n${BODY}`;
    expect(extractText({ text: `Ok\n\nSent from my iPhone\n\n${forward}` })).toBe(`Ok\n\n${forward}`);
  });
});
