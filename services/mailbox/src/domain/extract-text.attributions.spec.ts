/**
 * The attribution line of each client as it writes it, per language (Gmail, Apple Mail,
 * Thunderbird, Yahoo, Proton, Fastmail, K-9, FairEmail, Roundcube, Horde, SOGo, GMX, Outlook
 * for Mac, mutt, Gnus, Evolution, Zoho, Mail.ru, Yandex, ukr.net, NetEase, QQ/Foxmail, Naver,
 * Onet, WP, Seznam, Libero): new text above it is kept, and the history below it goes, whether
 * that history is `>`-quoted or not, on one line or wrapped. Beside them, lines of new text that name a writer but
 * carry neither address, time nor date: they stay, with the text below them.
 */
import { extractText } from './extract-text';

const ATTRIBUTIONS: [lang: string, client: string, line: string][] = [
  ['en', 'gmail', 'On Mon, Mar 20, 2017 at 10:00 AM John Smith <john@example.com> wrote:'],
  ['en', 'gmail', 'On Mon, 20 Mar 2017 at 10:00, John Smith <john@example.com> wrote:'],
  ['en', 'apple', 'On Mar 20, 2017, at 10:00 AM, John Smith <john@example.com> wrote:'],
  ['en', 'apple', 'On 20 Mar 2017, at 10:00, John Smith <john@example.com> wrote:'],
  ['en', 'thunderbird', 'On 3/20/17 10:00 AM, John Smith wrote:'],
  ['en', 'thunderbird', 'On 20/03/2017 10:00, John Smith wrote:'],
  ['en', 'yahoo', 'On Monday, March 20, 2017, 10:00:00 AM GMT+1, John Smith <john@example.com> wrote:'],
  ['en', 'proton', 'On Monday, March 20th, 2017 at 10:00 AM, John Smith <john@example.com> wrote:'],
  ['en', 'fastmail', 'On Mon, 20 Mar 2017, at 10:00, John Smith wrote:'],
  ['en', 'k9', 'On March 20, 2017 10:00:00 AM GMT+01:00, John Smith <john@example.com> wrote:'],
  ['en', 'roundcube', 'On 2017-03-20 10:00, John Smith wrote:'],
  ['en', 'horde', 'Quoting John Smith <john@example.com>:'],
  ['en', 'sogo', 'On Monday, March 20, 2017 10:00 CET, "John Smith" <john@example.com> wrote:'],
  ['en', 'outlook-mac', 'On 20/03/2017, 10:00, "John Smith" <john@example.com> wrote:'],
  ['en', 'mutt', 'On Mon, Mar 20, 2017 at 10:00:00AM +0100, John Smith wrote:'],
  ['en', 'mutt', '* John Smith <john@example.com> [2017-03-20 10:00]:'],
  ['en', 'gnus', 'John Smith <john@example.com> writes:'],
  ['en', 'evolution', 'On Mon, 2017-03-20 at 10:00 +0100, John Smith wrote:'],
  ['en', 'zoho', '---- On Mon, 20 Mar 2017 10:00:00 +0100 John Smith <john@example.com> wrote ----'],
  ['en', 'superhuman', 'On Mon, Mar 20 2017 at 10:00 AM, John Smith <john@example.com> wrote:'],
  ['en', 'hey', 'On March 20, 2017, John Smith <john@example.com> wrote:'],
  ['en', 'fairemail', '20 Mar 2017 10:00:00 John Smith <john@example.com>:'],
  ['de', 'gmail', 'Am Mo., 20. März 2017 um 10:00 Uhr schrieb John Smith <john@example.com>:'],
  ['de', 'apple', 'Am 20.03.2017 um 10:00 schrieb John Smith <john@example.com>:'],
  ['de', 'thunderbird', 'Am 20.03.17 um 10:00 schrieb John Smith:'],
  ['de', 'yahoo', 'Am Montag, 20. März 2017, 10:00:00 MEZ hat John Smith <john@example.com> Folgendes geschrieben:'],
  ['de', 'k9', 'Am 20. März 2017 10:00:00 MEZ schrieb John Smith <john@example.com>:'],
  ['de', 'roundcube', 'Am 20.03.2017 10:00, schrieb John Smith:'],
  ['de', 'horde', 'Zitat von John Smith <john@example.com>:'],
  ['de', 'sogo', 'Am Montag, 20. März 2017 10:00 CET, schrieb "John Smith" <john@example.com>:'],
  ['de', 'gmx', 'John Smith <john@example.com> hat am 20. März 2017 um 10:00 geschrieben:'],
  ['de', 'outlook-mac', 'Am 20.03.17, 10:00 schrieb "John Smith" <john@example.com>:'],
  ['fr', 'gmail', 'Le lun. 20 mars 2017 à 10:00, John Smith <john@example.com> a écrit :'],
  ['fr', 'apple', 'Le 20 mars 2017 à 10:00, John Smith <john@example.com> a écrit :'],
  ['fr', 'thunderbird', 'Le 20/03/2017 à 10:00, John Smith a écrit :'],
  ['fr', 'yahoo', 'Le lundi 20 mars 2017 à 10:00:00 UTC+1, John Smith <john@example.com> a écrit :'],
  ['fr', 'roundcube', 'Le 2017-03-20 10:00, John Smith a écrit :'],
  ['fr', 'horde', 'Citation John Smith <john@example.com> :'],
  ['fr', 'outlook-mac', 'Le 20/03/2017 10:00, « John Smith » <john@example.com> a écrit :'],
  ['fr', 'laposte', 'Le 20/03/2017 10:00, John Smith <john@example.com> a écrit:'],
  ['es', 'gmail', 'El lun., 20 mar. 2017 a las 10:00, John Smith (<john@example.com>) escribió:'],
  ['es', 'apple', 'El 20 mar 2017, a las 10:00, John Smith <john@example.com> escribió:'],
  ['es', 'thunderbird', 'El 20/3/17 a las 10:00, John Smith escribió:'],
  ['es', 'yahoo', 'El lunes, 20 de marzo de 2017 10:00:00 CET, John Smith <john@example.com> escribió:'],
  ['es', 'roundcube', 'El 2017-03-20 10:00, John Smith escribió:'],
  ['es', 'outlook-mac', 'El 20/3/17 10:00, "John Smith" <john@example.com> escribió:'],
  ['it', 'gmail', 'Il giorno lun 20 mar 2017 alle ore 10:00 John Smith <john@example.com> ha scritto:'],
  ['it', 'apple', 'Il giorno 20 mar 2017, alle ore 10:00, John Smith <john@example.com> ha scritto:'],
  ['it', 'thunderbird', 'Il 20/03/17 10:00, John Smith ha scritto:'],
  ['it', 'yahoo', 'Il lunedì 20 marzo 2017, 10:00:00 CET, John Smith <john@example.com> ha scritto:'],
  ['it', 'roundcube', 'Il 2017-03-20 10:00 John Smith ha scritto:'],
  ['it', 'libero', '----Messaggio originale----'],
  ['pt', 'gmail', 'Em seg., 20 de mar. de 2017 às 10:00, John Smith <john@example.com> escreveu:'],
  ['pt', 'gmail-pt', 'John Smith <john@example.com> escreveu no dia segunda, 20/03/2017 à(s) 10:00:'],
  ['pt', 'apple', 'Em 20 de mar de 2017, às 10:00, John Smith <john@example.com> escreveu:'],
  ['pt', 'apple-pt', 'A 20/03/2017, às 10:00, John Smith <john@example.com> escreveu:'],
  ['pt', 'thunderbird', 'Em 20/03/2017 10:00, John Smith escreveu:'],
  ['pt', 'yahoo', 'Em segunda-feira, 20 de março de 2017 10:00:00 BRT, John Smith <john@example.com> escreveu:'],
  ['nl', 'gmail', 'Op ma 20 mrt. 2017 om 10:00 schreef John Smith <john@example.com>:'],
  ['nl', 'apple', 'Op 20 mrt. 2017 om 10:00 heeft John Smith <john@example.com> het volgende geschreven:'],
  ['nl', 'thunderbird', 'Op 20-03-17 om 10:00 schreef John Smith:'],
  ['nl', 'yahoo', 'Op maandag 20 maart 2017 10:00:00 CET schreef John Smith <john@example.com>:'],
  ['nl', 'outlook-mac', 'Op 20-03-17 10:00 heeft John Smith <john@example.com> geschreven:'],
  ['da', 'gmail', 'Den man. 20. mar. 2017 kl. 10.00 skrev John Smith <john@example.com>:'],
  ['da', 'apple', 'Den 20. mar. 2017 kl. 10.00 skrev John Smith <john@example.com>:'],
  ['da', 'thunderbird', 'Den 20-03-2017 kl. 10:00 skrev John Smith:'],
  ['da', 'yahoo', 'Den mandag den 20. marts 2017 10.00.00 CET skrev John Smith <john@example.com>:'],
  ['nb', 'gmail', 'man. 20. mar. 2017 kl. 10:00 skrev John Smith <john@example.com>:'],
  ['nb', 'apple', '20. mar. 2017 kl. 10:00 skrev John Smith <john@example.com>:'],
  ['nb', 'thunderbird', 'Den 20.03.2017 10:00, skrev John Smith:'],
  ['sv', 'gmail', 'Den mån 20 mars 2017 kl 10:00 skrev John Smith <john@example.com>:'],
  ['sv', 'apple', '20 mars 2017 kl. 10:00 skrev John Smith <john@example.com>:'],
  ['sv', 'thunderbird', 'Den 2017-03-20 kl. 10:00, skrev John Smith:'],
  ['sv', 'yahoo', 'Den måndag 20 mars 2017 10:00:00 CET, John Smith <john@example.com> skrev:'],
  ['fi', 'gmail', 'ma 20. maalisk. 2017 klo 10.00 John Smith (john@example.com) kirjoitti:'],
  ['fi', 'apple', 'John Smith <john@example.com> kirjoitti 20.3.2017 kello 10.00:'],
  ['fi', 'thunderbird', '20.3.2017 klo 10.00 John Smith kirjoitti:'],
  ['fi', 'yahoo', 'maanantai 20. maaliskuuta 2017 klo 10.00.00 UTC+1 John Smith <john@example.com> kirjoitti:'],
  ['pl', 'gmail', 'pon., 20 mar 2017 o 10:00 John Smith <john@example.com> napisał(a):'],
  ['pl', 'apple', 'Wiadomość napisana przez John Smith <john@example.com> w dniu 20.03.2017, o godz. 10:00:'],
  ['pl', 'thunderbird', 'W dniu 20.03.2017 o 10:00, John Smith pisze:'],
  ['pl', 'yahoo', 'W poniedziałek, 20 marca 2017 10:00:00 CET, John Smith <john@example.com> napisał:'],
  ['pl', 'onet', 'Dnia 20 marca 2017 10:00 John Smith <john@example.com> napisał(a):'],
  ['pl', 'wp', 'Dnia 20.03.2017 o 10:00 John Smith <john@example.com> napisał(a):'],
  ['cs', 'gmail', 'po 20. 3. 2017 v 10:00 odesílatel John Smith <john@example.com> napsal:'],
  ['cs', 'apple', '20. 3. 2017 v 10:00, John Smith <john@example.com>:'],
  ['cs', 'thunderbird', 'Dne 20. 03. 17 v 10:00 John Smith napsal(a):'],
  ['cs', 'seznam', '---------- Původní e-mail ----------'],
  ['ru', 'gmail', 'пн, 20 мар. 2017 г. в 10:00, John Smith <john@example.com>:'],
  ['ru', 'apple', '20 марта 2017 г., в 10:00, John Smith <john@example.com> написал(а):'],
  ['ru', 'thunderbird', '20.03.2017 10:00, John Smith пишет:'],
  ['ru', 'yahoo', 'понедельник, 20 марта 2017 г., 10:00:00 GMT+3, John Smith <john@example.com> написал(-а):'],
  ['ru', 'yandex', '20.03.2017, 10:00, "John Smith" <john@example.com>:'],
  ['ru', 'mailru', 'Понедельник, 20 марта 2017, 10:00 +03:00 от John Smith <john@example.com>:'],
  ['ru', 'outlook-mac', '20.03.2017, 10:00, "John Smith" <john@example.com> написал:'],
  ['uk', 'gmail', 'пн, 20 бер. 2017 о 10:00 John Smith <john@example.com> пише:'],
  ['uk', 'thunderbird', '20.03.17 10:00, John Smith пише:'],
  ['uk', 'apple', '20 бер. 2017 р. о 10:00 John Smith <john@example.com> написав(-ла):'],
  ['uk', 'ukrnet', '20 березня 2017, 10:00:00, від "John Smith" <john@example.com>:'],
  ['tr', 'gmail', 'John Smith <john@example.com>, 20 Mar 2017 Pzt, 10:00 tarihinde şunu yazdı:'],
  ['tr', 'apple', '20 Mar 2017 tarihinde 10:00 saatinde, John Smith <john@example.com> şunları yazdı:'],
  ['tr', 'thunderbird', '20.03.2017 10:00 tarihinde John Smith yazdı:'],
  ['tr', 'yahoo', '20 Mart 2017 Pazartesi 10:00:00 GMT+3 tarihinde John Smith <john@example.com> şunu yazdı:'],
  ['ja', 'gmail', '2017年3月20日(月) 10:00 John Smith <john@example.com>:'],
  ['ja', 'apple', '2017/03/20 10:00、John Smith <john@example.com>のメール:'],
  ['ja', 'thunderbird', 'On 2017/03/20 10:00, John Smith wrote:'],
  ['ja', 'outlook-mac', '2017/03/20 10:00 に、"John Smith" <john@example.com> は次のように書きました:'],
  ['ja', 'yahoo-jp', '----- Original Message -----'],
  ['zh', 'gmail', 'John Smith <john@example.com> 于2017年3月20日周一 上午10:00写道：'],
  ['zh', 'gmail-tw', 'John Smith <john@example.com> 於 2017年3月20日 週一 上午10:00寫道：'],
  ['zh', 'apple', '在 2017年3月20日，上午10:00，John Smith <john@example.com> 写道：'],
  ['zh', 'apple-tw', 'John Smith <john@example.com> 於 2017年3月20日 上午10:00 寫道：'],
  ['zh', 'thunderbird', '在 2017/3/20 10:00, John Smith 写道:'],
  ['zh', 'netease', '在 2017-03-20 10:00:00，"John Smith" <john@example.com> 写道：'],
  ['zh', 'foxmail', '------------------ Original ------------------'],
  ['zh', 'yahoo-tw', 'John Smith <john@example.com> 在 2017年3月20日 星期一 上午10:00:00 [GMT+8] 寫道：'],
  ['ko', 'gmail', '2017년 3월 20일 (월) 오전 10:00, John Smith <john@example.com>님이 작성:'],
  ['ko', 'apple', '2017. 3. 20. 오전 10:00, John Smith <john@example.com> 작성:'],
  ['ko', 'thunderbird', '2017-03-20 오전 10:00에 John Smith 이(가) 쓴 글:'],
  ['ko', 'naver', '-----Original Message-----'],
  ['ar', 'gmail', 'في الاثنين، 20 مارس 2017 في 10:00 ص تمت كتابة ما يلي بواسطة John Smith <john@example.com>:'],
  ['ar', 'apple', 'في 20 مارس 2017، الساعة 10:00 ص، كتب John Smith <john@example.com>:'],
  ['ar', 'thunderbird', 'في 20/03/2017 10:00، كتب John Smith:'],
  ['he', 'gmail', 'בתאריך יום ב׳, 20 במרץ 2017 ב-10:00 מאת John Smith <john@example.com>:'],
  ['he', 'apple', 'ב-20 במרץ 2017, בשעה 10:00, John Smith <john@example.com> כתב/ה:'],
  ['he', 'thunderbird', 'בתאריך 20/03/2017 10:00, John Smith כתב:'],
];

const LOOK_ALIKES: [lang: string, line: string][] = [
  ['en', 'On Monday I wrote:'],
  ['de', 'Hans schrieb mir gestern, dass es klappt:'],
  ['fr', 'Le client a écrit hier :'],
  ['es', 'Juan escribió esto:'],
  ['it', 'Mario ha scritto:'],
  ['pt', 'O cliente escreveu ontem:'],
  ['nl', 'Jan schreef het volgende:'],
  ['da', 'Peter skrev i går:'],
  ['nb', 'Per skrev i går:'],
  ['sv', 'Per skrev i går:'],
  ['fi', 'Pekka kirjoitti eilen:'],
  ['pl', 'Piotr napisał wczoraj:'],
  ['cs', 'Petr napsal včera:'],
  ['ru', 'Пётр написал вчера:'],
  ['uk', 'Петро написав учора:'],
  ['tr', 'Mehmet dün yazdı:'],
  ['ja', '田中さんが昨日書きました：'],
  ['zh', '王伟昨天写道：'],
  ['ko', '철수 씨가 어제 작성:'],
  ['ar', 'كتب أحمد أمس:'],
  ['he', 'יוסי כתב אתמול:'],
];

describe('attribution lines', () => {
  it.each(ATTRIBUTIONS)('%s %s: %s, above unquoted history', (_lang, _client, line) => {
    expect(extractText({ text: `Ok\n\n${line}\n\nCan you call me?` })).toBe('Ok');
  });

  it.each(ATTRIBUTIONS)('%s %s: %s, above a quote', (_lang, _client, line) => {
    expect(extractText({ text: `Ok\n\n${line}\n> Can you call me?` })).toBe('Ok');
  });

  // Wrapped as clients and list servers wrap long lines: at 40, 50, 60 or 72 columns, before
  // the address, or after Gmail's "<"; above unquoted history, above a quote, and bottom-posted.
  it.each(ATTRIBUTIONS.filter(([, , line]) => !line.startsWith('-')))('%s %s: %s, wrapped', (_lang, _client, line) => {
    const wrapped: string[] = [];
    for (const column of [40, 50, 60, 72]) {
      const at = line.length > column ? line.lastIndexOf(' ', column) : -1;
      if (at > 0) wrapped.push(`${line.slice(0, at)}\n${line.slice(at + 1)}`);
    }
    const lt = line.indexOf('<');
    if (lt > 0) wrapped.push(`${line.slice(0, lt).trimEnd()}\n${line.slice(lt)}`, `${line.slice(0, lt + 1)}\n${line.slice(lt + 1)}`);
    const missed = wrapped.flatMap((w) =>
      [`Ok\n\n${w}\n\nCan you call me?`, `Ok\n\n${w}\n> Can you call me?`, `${w}\n> Can you call me?\n\nOk`].filter((text) => extractText({ text }) !== 'Ok'),
    );
    expect(missed).toEqual([]);
  });

  it.each(LOOK_ALIKES)('%s: keeps "%s" and the text below it', (_lang, line) => {
    const text = `Hi,\n\n${line}\nthe delivery moves to Friday.\n\nAnn`;
    expect(extractText({ text })).toBe(text);
  });
});
