#!/usr/bin/env bash
# The custom-domains walkthrough (issue 25), as a new user would do it with curl, against a
# running `npm start` whose relay is a sink keeping each message as a file, whose DNS is the
# walkthrough's own server on loopback, and which may deliver webhooks to loopback:
#
#   smtp-sink -u "$USER" -d "/tmp/mailroom-sink/%M." 127.0.0.1:2526 100 &   # Debian: postfix
#   node docs/walkthroughs/domains-aids.cjs &     # DNS on 127.0.0.1:5354 from /tmp/mailroom-zone.json, webhooks on :8099
#   DNS_SERVERS=127.0.0.1:5354 WEBHOOK_ALLOWED_CIDRS=127.0.0.1/32 SMTP_RELAY_URL=smtp://127.0.0.1:2526 npm start
#   bash docs/walkthroughs/domains.sh
#
# Every step prints the request and the answer; docs/walkthroughs/domains.md is one run.
set -euo pipefail
API="${API:-http://127.0.0.1:8080/api/v1}"
SINK="${SINK:-/tmp/mailroom-sink}"
SMTP_PORT="${SMTP_PORT:-2525}"
DNS="${DNS:-127.0.0.1:5354}"
ZONE_FILE="${ZONE_FILE:-/tmp/mailroom-zone.json}"
HOOK_URL="${HOOK_URL:-http://127.0.0.1:8099/hooks}"
HOOK_SECRET_FILE="${HOOK_SECRET_FILE:-/tmp/mailroom-hook-secret}"
HOOK_LOG="${HOOK_LOG:-/tmp/mailroom-hook.log}"
RUN="$(date +%s)"
ADA="ada.$RUN@example.com"
DOMAIN="acme$RUN.com"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# The project's Node (24) for the DKIM check below.
# shellcheck source=scripts/node-env.sh
source "$ROOT/scripts/node-env.sh"
# shellcheck source=docs/walkthroughs/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# smtp MAIL_FROM RCPT SUBJECT: one message to the SMTP edge; prints the edge's answer.
smtp() {
  python3 - "$SMTP_PORT" "$1" "$2" "$3" <<'PY'
import smtplib, sys
from email.message import EmailMessage
port, sender, rcpt, subject = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
m = EmailMessage()
m['From'], m['To'], m['Subject'] = sender, rcpt, subject
m.set_content('Hello, could you send me the invoice for October?\n')
try:
    with smtplib.SMTP('127.0.0.1', int(port), local_hostname='mail.customer.example.net') as s:
        s.send_message(m)
    print(f'SMTP to {rcpt}: 250 accepted')
except smtplib.SMTPRecipientsRefused as e:
    code, text = e.recipients[rcpt]
    print(f'SMTP to {rcpt}: {code} {text.decode()}')
PY
}

# until_message INBOX SUBJECT: waits (10 s at most) for a message of that subject in the inbox; prints its id.
until_message() {
  for _ in $(seq 100); do
    id="$(curl -sS "$API/inboxes/$1/messages" -H "Authorization: Bearer $TOKEN" | jq -r --arg s "$2" '[.data[] | select(.subject == $s)][0].message_id // empty')"
    [ -n "$id" ] && { echo "$id"; return; }
    sleep 0.1
  done
  echo "no message \"$2\" in $1" >&2
  exit 1
}

echo "## Ada signs up, verifies her address, and points a webhook at her receiver for domain.verified"
call POST /auth/signup "" "{\"email\":\"$ADA\",\"password\":\"correct horse battery\",\"name\":\"Ada\"}"
TOKEN="$(jq -r .access_token <<<"$BODY")"
call POST /auth/verify-email "" "{\"email\":\"$ADA\",\"code\":\"$(from_mail "$ADA" 'verification code: (\d{6})')\"}"
call POST /webhooks/endpoints "$TOKEN" "{\"url\":\"$HOOK_URL\",\"events\":[\"domain.verified\"]}"
jq -r .secret <<<"$BODY" >"$HOOK_SECRET_FILE"

echo "## She adds her domain: the records to publish come back, and the same as a zone file BIND accepts"
call POST /domains "$TOKEN" "{\"domain_name\":\"$DOMAIN\"}"
DOMAIN_ID="$(jq -r .domain_id <<<"$BODY")"
RECORDS="$(jq -c .records <<<"$BODY")"
jq -r '.records[] | "  \(.kind)\t\(.type)\t\(.name)\t\(.value[0:70])"' <<<"$BODY" >&2
curl -sS "$API/domains/$DOMAIN_ID/zone-file" -H "Authorization: Bearer $TOKEN" >"/tmp/$DOMAIN.zone"
cat "/tmp/$DOMAIN.zone" | cut -c1-110 >&2
# named-checkzone wants a whole zone: an SOA and an NS before the fragment.
printf '$TTL 3600\n@ IN SOA ns1.%s. hostmaster.%s. 1 3600 600 86400 300\n@ IN NS ns1.%s.\nns1 IN A 192.0.2.53\n' "$DOMAIN" "$DOMAIN" "$DOMAIN" |
  cat - "/tmp/$DOMAIN.zone" >"/tmp/$DOMAIN.full.zone"
echo "\$ named-checkzone $DOMAIN <zone file with an SOA and NS added>" >&2
named-checkzone "$DOMAIN" "/tmp/$DOMAIN.full.zone" >&2
echo >&2

echo "## Verifying before the records are published: pending, each record missing"
call POST "/domains/$DOMAIN_ID/verify" "$TOKEN"
echo "## An inbox on the domain is refused while it is not verified"
call POST /inboxes "$TOKEN" "{\"username\":\"support\",\"domain\":\"$DOMAIN\"}"

echo "## She publishes the records (the walkthrough's DNS server serves them) and verifies: verified"
jq -c --argjson new "$RECORDS" '. + ($new | map(
  if .type == "MX" then {type: "MX", name, preference: .priority, exchange: .value}
  elif .type == "CNAME" then {type: "CNAME", name, target: .value}
  else {type: "TXT", name, text: .value} end))' "$ZONE_FILE" >"$ZONE_FILE.new" && mv "$ZONE_FILE.new" "$ZONE_FILE"
sleep 0.5 # the DNS server reads the file again within 100 ms
call POST "/domains/$DOMAIN_ID/verify" "$TOKEN"
echo "## Verifying again changes nothing and announces nothing"
call POST "/domains/$DOMAIN_ID/verify" "$TOKEN"
for _ in $(seq 50); do grep -q "$DOMAIN_ID" "$HOOK_LOG" 2>/dev/null && break; sleep 0.1; done
sleep 2 # time for a second delivery, if one were (wrongly) made
echo "webhook deliveries of domain.verified for $DOMAIN_ID (signature checked by the receiver):" >&2
grep "$DOMAIN_ID" "$HOOK_LOG" | jq -c '{verified, type: .body.type, data: .body.data}' >&2
echo "count: $(grep -c "$DOMAIN_ID" "$HOOK_LOG")" >&2
echo >&2

echo "## support@ on the domain; mail to it over SMTP arrives"
call POST /inboxes "$TOKEN" "{\"username\":\"support\",\"domain\":\"$DOMAIN\"}"
SUPPORT="$(jq -r .inbox_id <<<"$BODY")"
smtp "carol@customer.example.net" "support@$DOMAIN" "Invoice for October" >&2
MESSAGE="$(until_message "$SUPPORT" "Invoice for October")"
call GET "/inboxes/$SUPPORT/messages/$MESSAGE" "$TOKEN"

echo "## The agent replies; the relay receives it signed d=$DOMAIN, checked by mailauth against the record served"
call POST "/inboxes/$SUPPORT/messages/$MESSAGE/reply" "$TOKEN" '{"text_body":"Here it is: 420 EUR, due on the 30th."}'
for _ in $(seq 100); do
  SENT="$(grep -l "^Subject: Re: Invoice for October" "$SINK"/* 2>/dev/null | xargs -r grep -l "^From: support@$DOMAIN" | head -1 || true)"
  [ -n "$SENT" ] && break
  sleep 0.1
done
[ -n "$SENT" ] || { echo "the reply did not reach the relay" >&2; exit 1; }
grep -m1 -i "^From:" "$SENT" >&2
(cd "$ROOT" && node -e '
  const { dkimVerify } = require("mailauth");
  const { Resolver } = require("node:dns/promises");
  const r = new Resolver(); r.setServers([process.argv[2]]);
  dkimVerify(require("fs").readFileSync(process.argv[1]), { resolver: (n, t) => r.resolve(n, t) }).then((v) =>
    v.results.forEach((x) => console.error(`mailauth: DKIM ${x.status.result} d=${x.signingDomain} s=${x.selector} (${x.status.comment ?? "no comment"})`)));
' "$SENT" "$DNS")
echo >&2

echo "## Mail to an unknown address is refused; with a catch-all it goes to that inbox"
smtp "carol@customer.example.net" "billing@$DOMAIN" "Where is my refund?" >&2
call POST /inboxes "$TOKEN" "{\"username\":\"everything-else\",\"domain\":\"$DOMAIN\"}"
CATCH_ALL="$(jq -r .inbox_id <<<"$BODY")"
call PATCH "/domains/$DOMAIN_ID/catch-all" "$TOKEN" "{\"inbox_id\":\"$CATCH_ALL\"}"
smtp "carol@customer.example.net" "billing@$DOMAIN" "Where is my refund?" >&2
until_message "$CATCH_ALL" "Where is my refund?" >/dev/null
call GET "/inboxes/$CATCH_ALL/messages" "$TOKEN"
echo "## A catch-all must be an inbox of the domain"
call POST /inboxes "$TOKEN" '{"username":"elsewhere"}'
call PATCH "/domains/$DOMAIN_ID/catch-all" "$TOKEN" "{\"inbox_id\":\"$(jq -r .inbox_id <<<"$BODY")\"}"
