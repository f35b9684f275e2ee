/**
 * Lines of new text shaped like the rarer markers, from a read-only review of the rules added in
 * the tenth session: each must stay, with everything after it, since a false marker cuts the
 * rest of the message. Beside each, the real marker it resembles, which must still fire.
 */
import { extractText } from './extract-text';
import { extractHtml } from './extract-html';

const kept = (text: string) => expect(extractText({ text })).toBe(text);

describe('look-alikes of the rarer markers stay new text', () => {
  it('tables whose last column is headed "Subject" are not Lotus Notes headers', () => {
    kept('Hi parents,\n\nThe trip schedule:\n\n    Date            From          To\n    2017-03-20      London        Paris\n    2017-03-22      Paris         London\n\nLessons on the return day:\n\n    Period          Teacher         Subject\n    1               Mr Brown        Maths\n\nPlease sign the consent form by Friday.\n\nMrs Green');
    kept('Stundenplan:\n\n    Tag        Von       An\n    20.03.2017 Köln      Bonn\n\n    Stunde     Lehrer    Betreff\n    1          Braun     Mathe\n\nDanke');
    const notes = 'Ok.\n\n\n             John Smith\n             <john@example.com>\n                                                                        To\n             03/20/2017 10:00 AM               Ann Lee\n                                                                   Subject\n                                               Lunch\n\nLunch?';
    expect(extractText({ text: notes })).toBe('Ok.');
  });

  it('sentences and list items that mention replying above a line are not help-desk markers', () => {
    kept('Hi,\n\nSorry, I missed the note asking me to reply above this line.\n\nThe invoice number is 4471.\n\nThanks,\nAnn');
    kept('Hello,\n\nYour form says: do not write above this line.\n\nBut there is no other place to write.\n\nBob');
    kept('Feedback:\n\n- Reply above this line is confusing for customers\n- The logo is too big\n\nCheers,\nMia');
    kept('Answer:\n\n(I always reply above this line, as your system asks.)\n\nThe server works now.\n\nTom');
    kept('Hi team,\n\nReply above the line in the ticket, then press send.\n\nJo');
    kept('Hello,\n\nWhere do I reply above this line?\nThe form shows two boxes.\n\nMaria');
    kept('Hi,\n\nSorry I will reply above this line next time.\nHere is the invoice number: 88231.\n\nTom');
    expect(extractText({ text: 'Done.\n\n##- Please type your reply above this line -##\n\nTicket #1 was updated.' })).toBe('Done.');
    expect(extractText({ text: 'Done.\n\nPlease reply above this line.\n\nTicket #1 was updated.' })).toBe('Done.');
  });

  it('sentences naming a carrier or maker after "Sent by" are not device lines', () => {
    kept('Hi,\n\nMy replacement phone has not arrived yet.\n\nSent by Verizon on 14 March, tracking number 1Z999AA10123456784.\n\nCan you check where it is?\n\nThanks,\nAnn');
    kept('Merhaba,\n\nSamsung Galaxy akıllı telefonumdan fotoğraflar dün gönderildi.\n\nLütfen kontrol edin.\n\nAyşe');
    expect(extractText({ text: 'Tamam.\n\nSamsung Galaxy akıllı telefonumdan gönderildi.' })).toBe('Tamam.');
    expect(extractText({ text: 'Ok.\n\nSent from my Verizon Wireless 4G LTE DROID' })).toBe('Ok.');
  });

  it('CLI prompts and menu paths are not Supercite quotes, unless a Supercite header names them', () => {
    kept('Output from the router at 10:30 today:\n\n  Router> show ip int brief\n  Router> ping 10.0.0.1\n\nThe ping fails. Any idea?');
    kept('To enable it:\n\n   Settings> Mail> Accounts\n\nthen tick the box.');
    const supercite = '>>>>> "Olivia" == Olivia Smith <olivia@example.net> writes:\n\n    Olivia> Does 25 build?\n\nNo, it needs 26.\n\n    Olivia> Is 25 supported?\n\nNot any more.';
    expect(extractText({ text: supercite })).toBe('No, it needs 26.\n\nNot any more.');
  });

  it('a line opened by "Quoting" above a quote is text unless it ends with a date and time in parentheses', () => {
    kept('I checked the contract.\n\nQuoting section 4 of the 2016 agreement\n\nSo we are covered.');
    expect(extractText({ text: 'I checked.\n\nQuoting section 4 of the 2016 agreement\n> The supplier shall deliver.\n\nSo we are covered.' })).toBe(
      'I checked.\n\nQuoting section 4 of the 2016 agreement\n\nSo we are covered.',
    );
    expect(extractText({ text: 'Quoting John Smith (2017-03-21 08:47:12)\n> Is it fixed?\n\nYes.' })).toBe('Yes.');
  });

  it("Lotus Notes' ruled '-----<name> wrote: -----' opens history without a date or an address", () => {
    const notes = 'Yes, I can cover it.\n\nThanks\nGina\n\n-----Paul Ramirez/Ops/Northbridge wrote: -----\nTo: Gina Torres/Ops/Northbridge@Northbridge\nFrom: Paul Ramirez/Ops/Northbridge\nDate: 03/05/2024 04:22PM\nSubject: Shift\n\nCan you cover Thursday?';
    expect(extractText({ text: notes })).toBe('Yes, I can cover it.\n\nThanks\nGina');
    kept('Agenda:\n\n----- What the board wrote -----\n\nWe approve the budget.');
  });

  it('an attribution runs on inside a line only glued to its text or after a sentence', () => {
    kept('Pani Mecenas,\n\nKluczowy jest fragment na str. 4.\nPełnomocnik powoda w piśmie z dnia 5 marca 2024 r. napisał:\n\n„Pozwany nie zgłosił zastrzeżeń.”\n\nTo nieprawda.\n\nPozdrawiam\nGrzegorz');
    expect(extractText({ text: 'Thanks!On Mon, Mar 20, 2017 at 10:00 AM, John <john@example.com> wrote:\nLunch?' })).toBe('Thanks!');
    expect(extractText({ text: 'Thanks. On Mon, Mar 20, 2017 at 10:00 AM, John <john@example.com> wrote:\nLunch?' })).toBe('Thanks.');
  });

  it('a device-like line introduced by a colon stays, last in the message too', () => {
    kept('Which app do I install on my phone?\n\nThe IT page says:\n\nGet Outlook for Android');
    kept('To read your mail on your phone:\n\nGet Outlook for iOS or Android from the App Store.');
    expect(extractText({ text: 'Yes, 3pm works.\n\nSent from my iPhone\nmeeting tomorrow at 3, ok for you? john' })).toBe('Yes, 3pm works.');
    kept('Hi Anna,\n\nSent by courier this morning\nand it should reach you by Friday.\n\nBest,\nTom');
    kept('Hi,\n\nSent from my phone earlier today but\nit bounced back, so resending.\n\nLi');
    kept('Hi Tom,\n\nSent from my phone earlier but it bounced, so trying again from my laptop.\n\nThe gate code is 4471#.\n\nRachel');
    expect(extractText({ text: 'Ok\n\nSent from my iPhone, please excuse typos\n\nOn Mon, Mar 20, 2017 at 10:00 AM, John <j@x.com> wrote:\n> Lunch?' })).toBe('Ok');
  });

  it('a quoted forward in a text part is a reply\'s history; a header block needs a date, an address or the subject the message answers', () => {
    expect(extractText({ text: 'Thanks, I will handle it.\n\n> ---------- Forwarded message ---------\n> From: John <john@example.com>\n>\n> Numbers attached.' })).toBe(
      'Thanks, I will handle it.',
    );
    const block = 'Thanks, done.\n\nFrom: Smith, John\nTo: Lee, Ann; Roe, Rich\nCc: Team\nSubject: RE: budget\n\nPlease update the budget.';
    expect(extractText({ text: block, subject: 'RE: Budget' })).toBe('Thanks, done.');
    kept(block);
    kept('Hi support,\n\nI deleted an email by mistake. It was\n\nFrom: Amazon\nSubject: Re: your order 123\n\nCan you restore it?\n\nThanks,\nAnn');
    expect(extractText({ text: 'Hi,\n\nFrom: Amazon\nSubject: Re: your order 123\n\nCan you restore it?', subject: 'Lost mail' })).toBe('Hi,\n\nFrom: Amazon\nSubject: Re: your order 123\n\nCan you restore it?');
    kept('Bon dia,\n\nCOMUNICAT INTERN\nDe: Gerència\nPer a: Tot el personal\nAssumpte: Tancament per vacances\n\nLes oficines romandran tancades.');
    expect(extractText({ text: 'Ça marche.\n\nLe 20 mars 2017 à 10h00, Jean Dupont a écrit :\n\nOn se voit vendredi ?' })).toBe('Ça marche.');
  });
});

describe('extracted_html keeps what is not history', () => {
  it('cuts at an "Original Message" separator inside a block, keeping the reply before it', () => {
    expect(extractHtml('<div>Thanks, will do.<br><br>-----Original Message-----<br>From: John &lt;j@x.com&gt;<br>old text</div>')).toBe('<div>Thanks, will do.<br /><br /></div>');
  });

  it('keeps indents (Outlook on the web, Gmail, Thunderbird) and removes blockquotes with a quote bar', () => {
    const indent = '<div>My points:</div><blockquote style="margin-top:0;margin-bottom:0"><div>1. Budget is fine</div></blockquote><div>Thanks</div>';
    expect(extractHtml(indent)).toBe(indent.replace(' style="margin-top:0;margin-bottom:0"', ''));
    expect(extractHtml('<div>Yes.</div><blockquote style="border-left:1px solid #0857A6;margin:10px">Old</blockquote>')).toBe('<div>Yes.</div>');
    expect(extractHtml('<div>Yes.</div><blockquote style="margin:0 0 20px 0"><div style="border-left: 1px solid #6D00F6">Old</div></blockquote>')).toBe('<div>Yes.</div>');
    const gmailIndent = '<p>Hi team,</p><blockquote style="margin:0 0 0 40px;border:none;padding:0px"><p>Action items:</p><div style="border-left:3px solid #f90">Ship it.</div></blockquote><p>Ann</p>';
    expect(extractHtml(gmailIndent)).toContain('Ship it.');
  });

  it("keeps a forward whole, the history it carries too", () => {
    const forward = '<div class="gmail_quote">---------- Forwarded message ---------<br>From: A &lt;a@x.com&gt;<br><div>Body</div><div>-----Original Message-----<br>From: B</div><div>Older</div></div>';
    expect(extractHtml(`<div>FYI</div>${forward}`)).toContain('Older');
  });
});
