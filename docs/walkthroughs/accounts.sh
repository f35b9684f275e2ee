#!/usr/bin/env bash
# The accounts walkthrough (issue 24), as a new user would do it with curl, against a running
# `npm start` whose mail goes to a sink that keeps each message as a file, with the gateway
# trusting X-Forwarded-For (so the brute-force step can come "from" 20 addresses):
#
#   smtp-sink -u "$USER" -d "/tmp/mailroom-sink/%M." 127.0.0.1:2526 100 &   # Debian: postfix
#   SMTP_RELAY_URL=smtp://127.0.0.1:2526 TRUST_PROXY=true npm start
#   bash docs/walkthroughs/accounts.sh
#
# Every step prints the request and the answer; docs/walkthroughs/accounts.md is one run.
# Signing in with an OpenID provider is shown by apps/all-in-one/test/oauth.int.spec.ts (a real
# oidc-provider on loopback, its login pages followed over HTTP); its run is in accounts.md.
set -euo pipefail
API="${API:-http://127.0.0.1:8080/api/v1}"
SINK="${SINK:-/tmp/mailroom-sink}"
RUN="$(date +%s)"
ADA="ada.$RUN@example.com"
PW='correct horse battery'
NEW_PW='a longer, newer passphrase'
BOB="bob.$RUN@example.com"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# shellcheck source=docs/walkthroughs/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The TOTP code of a base32 secret, `$2` steps from now (RFC 6238: SHA-1, 6 digits, 30 s).
totp() {
  python3 - "$1" "${2:-0}" <<'PY'
import base64, hashlib, hmac, struct, sys, time
secret, steps = sys.argv[1], int(sys.argv[2])
key = base64.b32decode(secret + '=' * (-len(secret) % 8))
digest = hmac.new(key, struct.pack('>Q', int(time.time()) // 30 + steps), hashlib.sha1).digest()
offset = digest[-1] & 15
print('%06d' % ((struct.unpack('>I', digest[offset:offset + 4])[0] & 0x7fffffff) % 1000000))
PY
}

echo "## Ada signs up and verifies her address with the code of the mail the relay received"
call POST /auth/signup "" "{\"email\":\"$ADA\",\"password\":\"$PW\",\"name\":\"Ada\"}"
call POST /auth/verify-email "" "{\"email\":\"$ADA\",\"code\":\"$(from_mail "$ADA" 'verification code: (\d{6})')\"}"

echo "## She forgets her password and resets it from the mail; the old password no longer works"
call POST /auth/password/reset-request "" "{\"email\":\"$ADA\"}"
call POST /auth/password/reset "" "{\"email\":\"$ADA\",\"code\":\"$(from_mail "$ADA" 'Reset your Mailroom password[\s\S]*?Your code is (\d{6})')\",\"new_password\":\"$NEW_PW\"}"
call POST /auth/login "" "{\"email\":\"$ADA\",\"password\":\"$PW\"}"
call POST /auth/login "" "{\"email\":\"$ADA\",\"password\":\"$NEW_PW\"}" -H 'User-Agent: laptop-browser/1.0'
LAPTOP="$(jq -r .access_token <<<"$BODY")"

echo "## She signs in on her phone too, lists her sessions and revokes the phone's: its token is refused"
call POST /auth/login "" "{\"email\":\"$ADA\",\"password\":\"$NEW_PW\"}" -H 'User-Agent: phone-app/2.0' -H 'X-Forwarded-For: 198.51.100.7'
PHONE="$(jq -r .access_token <<<"$BODY")"
echo "new-sign-in notice: $(from_mail "$ADA" '(New sign-in to your Mailroom account)')" >&2
echo >&2
call GET /user/me/sessions "$LAPTOP"
PHONE_SESSION="$(jq -r '[.data[] | select(.user_agent == "phone-app/2.0")][0].id' <<<"$BODY")"
call DELETE "/user/me/sessions/$PHONE_SESSION" "$LAPTOP"
revoked_at=$(date +%s%N)
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$API/user/me" -H "Authorization: Bearer $PHONE")" = 401 ]; do
  [ $(( ($(date +%s%N) - revoked_at) / 1000000 )) -lt 5000 ] || { echo "still accepted after 5 s" >&2; exit 1; }
done
echo "the phone's token refused $(( ($(date +%s%N) - revoked_at) / 1000000 )) ms after the revocation answered" >&2
call GET /user/me "$PHONE"

echo "## She turns MFA on with an authenticator (the code computed here from the secret), then logs in with it"
call POST /user/me/mfa/enrol "$LAPTOP"
SECRET="$(jq -r .secret <<<"$BODY")"
call POST /user/me/mfa/confirm "$LAPTOP" "{\"code\":\"$(totp "$SECRET")\"}"
call POST /auth/login "" "{\"email\":\"$ADA\",\"password\":\"$NEW_PW\"}"
MFA_TOKEN="$(jq -r .mfa_token <<<"$BODY")"
call POST /auth/mfa/verify-login "" "{\"mfa_token\":\"$MFA_TOKEN\",\"code\":\"000000\"}"
call POST /auth/mfa/verify-login "" "{\"mfa_token\":\"$MFA_TOKEN\",\"code\":\"$(totp "$SECRET" 1)\"}"
call GET /user/me/mfa "$(jq -r .access_token <<<"$BODY")"

echo "## Bob deletes his account: login is refused with a recovery token, and he recovers it"
call POST /auth/signup "" "{\"email\":\"$BOB\",\"password\":\"$PW\",\"name\":\"Bob\"}"
BOB_TOKEN="$(jq -r .access_token <<<"$BODY")"
call DELETE /user/me "$BOB_TOKEN" "{\"password\":\"$PW\"}"
call GET /user/me "$BOB_TOKEN"
call POST /auth/login "" "{\"email\":\"$BOB\",\"password\":\"$PW\"}"
RECOVERY="$(jq -r '.error.details[] | select(.path == "recovery_token") | .message' <<<"$BODY")"
call POST /user/me/recover "" "{\"recovery_token\":\"$RECOVERY\"}"
BOB_TOKEN="$(jq -r .access_token <<<"$BODY")"
call GET /user/me "$BOB_TOKEN"

echo "## He deletes it again; with the clock 31 days ahead the purge takes it: recovery fails, the address is unknown"
call DELETE /user/me "$BOB_TOKEN" "{\"password\":\"$PW\"}"
call POST /auth/login "" "{\"email\":\"$BOB\",\"password\":\"$PW\"}"
RECOVERY="$(jq -r '.error.details[] | select(.path == "recovery_token") | .message' <<<"$BODY")"
LATER="$(date -u -d '+31 days' +%Y-%m-%dT%H:%M:%SZ)"
echo "\$ node services/auth/dist/cli.js purge-deleted --now $LATER" >&2
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/mailroom}" NATS_CREDENTIALS_DIR="${NATS_CREDENTIALS_DIR:-$ROOT/.data/nats/auth}" \
  node "$ROOT/services/auth/dist/cli.js" purge-deleted --now "$LATER" >&2
echo >&2
call POST /user/me/recover "" "{\"recovery_token\":\"$RECOVERY\"}"
call POST /auth/login "" "{\"email\":\"$BOB\",\"password\":\"$PW\"}"
call POST /auth/login "" "{\"email\":\"nobody.$RUN@example.com\",\"password\":\"$PW\"}"

echo "## Someone guesses her password: 100 tries from 20 addresses, 5 each; an unknown address gets the same answers"
guess() { # email, address, try
  curl -sS -o /dev/null -w '%{http_code}\n' -X POST "$API/auth/login" -H 'Content-Type: application/json' -H "X-Forwarded-For: 203.0.113.$2" -d "{\"email\":\"$1\",\"password\":\"guess $3\"}"
}
NOBODY="stranger.$RUN@example.com"
for who in "$ADA" "$NOBODY"; do
  statuses="$(for a in $(seq 1 20); do for t in $(seq 1 5); do guess "$who" "$a" "$t"; done; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  echo "$who: $statuses" >&2
done
echo >&2
call POST /auth/login "" "{\"email\":\"$ADA\",\"password\":\"$NEW_PW\"}" -H 'X-Forwarded-For: 192.0.2.99'
echo "its $(curl -sS -D - -o /dev/null -X POST "$API/auth/login" -H 'Content-Type: application/json' -H 'X-Forwarded-For: 192.0.2.99' -d "{\"email\":\"$ADA\",\"password\":\"$NEW_PW\"}" | grep -i '^retry-after' | tr -d '\r')" >&2
# The same answer but for the request id and the seconds left of each lock.
same() { jq -c 'del(.error.request_id)' <<<"$BODY" | sed -E 's/[0-9]+ s,/N s,/'; }
KNOWN="$(same)"
call POST /auth/login "" "{\"email\":\"$NOBODY\",\"password\":\"$NEW_PW\"}" -H 'X-Forwarded-For: 192.0.2.99'
[ "$KNOWN" = "$(same)" ] && echo "known and unknown address: the same answer (but for the request id and the seconds left)" >&2
echo "lock-out notice: $(from_mail "$ADA" '(Your Mailroom account: sign-in locked after failed attempts)')" >&2
echo >&2
