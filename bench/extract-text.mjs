// npm run bench:extract-text — how long extracted_text takes. A ~30 KB reply (new text
// above a Gmail attribution and 29 KB of quoted thread with nested attributions and header
// blocks) and a ~30 KB inline reply (answers between quotes, so every line is looked at),
// each run many times: p50 and p99 per message. Then adversarial 1 MB inputs (one huge
// line, a run of blanks, header-like memo lines, attribution starts that never end,
// thousands of attributions, nested and repeated HTML blockquotes): the time of one run
// each. Beside every figure, the bare baseline from the same run on the same input: a
// split into lines, each trimmed, joined again. No test asserts a duration.
// Options: --runs N (2000 per message).
import { extractText } from '@mailroom/mailbox';
import { arg, percentile } from './common.mjs';

const RUNS = arg('runs', 2000);
const MB = 1 << 20;
const lines = (line) => `${line}\n`.repeat(Math.ceil(MB / (line.length + 1)));
const bare = (input) => (input.text ?? input.html).split('\n').map((l) => l.trimEnd()).join('\n');

function thread(bytes) {
  const reply = 'Hi John,\n\nThanks for the numbers. I went through the sheet and the totals for March match ours now.\n'.repeat(4) + '\nRegards,\nAnn\n\n';
  let quoted = '';
  for (let n = 0; quoted.length < bytes; n++) {
    quoted += `> On Mon, Mar ${(n % 28) + 1}, 2017 at 10:00 AM, Person ${n} <person${n}@example.com> wrote:\n>\n`;
    quoted += '> > Could you check the March figures again? The export from the billing system looks off by one row.\n'.repeat(8);
    quoted += `> From: Billing <billing@example.com>\n> Sent: Monday, March ${(n % 28) + 1}, 2017 10:00 AM\n> To: Ann\n> Subject: RE: figures\n>\n`;
  }
  return `${reply}On Tue, Mar 21, 2017 at 9:00 AM, John Smith <john@example.com> wrote:\n${quoted}`;
}

function inline(bytes) {
  let text = 'On Mon, Mar 20, 2017 at 10:00 AM, John Smith <john@example.com> wrote:\n';
  for (let n = 0; text.length < bytes; n++) {
    text += `> Question ${n}: what should we do about item ${n} of the list we made last week?\n> It is still open.\n\n`;
    text += `Answer ${n}: we close it on Friday, after the review with the team at 10:00.\n\n`;
  }
  return text;
}

function timeRuns(fn, input, runs) {
  for (let i = 0; i < Math.min(200, runs); i++) fn(input); // warm-up, not counted
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn(input);
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b);
}

const f = (ms) => `${ms.toFixed(3)} ms`;
console.log(`extracted_text, ${RUNS} runs per message (p50 / p99; bare = split, trim, join of the same input)`);
for (const [name, text] of [['gmail thread, 30 KB', thread(30_000)], ['inline reply, 30 KB', inline(30_000)]]) {
  const input = { text };
  const ours = timeRuns(extractText, input, RUNS);
  const base = timeRuns(bare, input, RUNS);
  console.log(`  ${name.padEnd(22)} ${(text.length / 1024).toFixed(1)} KB  ours ${f(percentile(ours, 50))} / ${f(percentile(ours, 99))}   bare ${f(percentile(base, 50))} / ${f(percentile(base, 99))}`);
}

const adversarial = {
  'one 1 MB line': { text: 'a'.repeat(MB) },
  '1 MB of blanks, a word': { text: `${' '.repeat(MB)}x${' '.repeat(MB)}` },
  '`>` quotes': { text: lines('> quoted text') },
  'Supercite quotes': { text: `hi\n\n${lines('JD> quoted text')}` },
  '`|` quotes, 1,000 blanks': { text: `hi\n\n${lines(`|${' '.repeat(1_000)}x`)}` },
  'From:/To: memo lines': { text: lines('From: x\nTo: y') },
  'attribution starts': { text: lines('On Mon, Mar 20, 2017 at 10:00 AM, John <') },
  'verbs, no attribution': { text: lines(`On 10:00 ${'wrote '.repeat(160)}x`) },
  'addresses, one line': { text: `${'a@b.c<'.repeat(MB / 6)}:` },
  'attributions + quotes': { text: lines('On Mon, Mar 20, 2017 at 10:00 AM, John <j@x.com> wrote:\n> q\nok') },
  'dated attributions': { text: lines('20.03.2017, 10:00, "A" <a@b.c>:\n> q') },
  'device-like line': { text: `text\n\n${'Sent from my iPhone '.repeat(MB / 20)}` },
  'nbsp, lines cut short': { text: `a\u00a0b\n\n${lines('Ok!On Mon, 20 Mar 2017 at 10:00, J <j@x.com> wrote:\n> q')}` },
  'nested <blockquote>': { html: `<p>hi</p>${'<blockquote>'.repeat(MB / 12)}x` },
  'repeated <blockquote>': { html: `<p>hi</p>${'<blockquote>q</blockquote>'.repeat(MB / 28)}` },
};
console.log('\nadversarial inputs, one run each after one warm-up (ours / bare)');
for (const [name, input] of Object.entries(adversarial)) {
  extractText(input);
  const t = performance.now();
  const out = extractText(input);
  const ours = performance.now() - t;
  const b = performance.now();
  bare(input);
  const base = performance.now() - b;
  const size = (input.text ?? input.html).length;
  console.log(`  ${name.padEnd(26)} ${(size / MB).toFixed(2)} MB  ours ${f(ours).padStart(12)}   bare ${f(base).padStart(10)}   output ${out.length} chars`);
}
