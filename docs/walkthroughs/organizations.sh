#!/usr/bin/env bash
# The organizations walkthrough (issue 23), as a new user would do it with curl, against a
# running `npm start` whose mail goes to a sink that keeps each message as a file:
#
#   smtp-sink -u "$USER" -d "/tmp/mailroom-sink/%M." 127.0.0.1:2526 100 &   # Debian: postfix
#   SMTP_RELAY_URL=smtp://127.0.0.1:2526 npm start
#   bash docs/walkthroughs/organizations.sh
#
# Every step prints the request and the answer; docs/walkthroughs/organizations.md is one run.
set -euo pipefail
API="${API:-http://127.0.0.1:8080/api/v1}"
SINK="${SINK:-/tmp/mailroom-sink}"
RUN="$(date +%s)"
ALICE="alice.$RUN@example.com"
BOB="bob.$RUN@example.com"

# shellcheck source=docs/walkthroughs/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

echo "## Two people sign up and verify their addresses from the mail"
call POST /auth/signup "" "{\"email\":\"$ALICE\",\"password\":\"correct horse battery\",\"name\":\"Alice\"}"
ALICE_TOKEN="$(jq -r .access_token <<<"$BODY")"
ORG="$(curl -sS "$API/org" -H "Authorization: Bearer $ALICE_TOKEN" | jq -r .id)"
PROD="$(curl -sS "$API/org" -H "Authorization: Bearer $ALICE_TOKEN" | jq -r .default_env_id)"
call POST /auth/verify-email "" "{\"email\":\"$ALICE\",\"code\":\"$(from_mail "$ALICE" 'verification code: (\d{6})')\"}"
call POST /auth/signup "" "{\"email\":\"$BOB\",\"password\":\"correct horse battery\",\"name\":\"Bob\"}"
BOB_OWN_TOKEN="$(jq -r .access_token <<<"$BODY")"
call POST /auth/verify-email "" "{\"email\":\"$BOB\",\"code\":\"$(from_mail "$BOB" 'verification code: (\d{6})')\"}"

echo "## Alice invites Bob; Bob accepts with the token from his mail and switches to Alice's organization"
call POST /org/invitations "$ALICE_TOKEN" "{\"email\":\"$BOB\",\"role\":\"member\"}"
call POST /invitations/accept "$BOB_OWN_TOKEN" "{\"token\":\"$(from_mail "$BOB" '(mri_[A-Za-z0-9_-]+)')\"}"
BOB_MEMBER="$(jq -r .member_id <<<"$BODY")"
call GET /user/me/organizations "$BOB_OWN_TOKEN"
call POST /auth/switch-org "$BOB_OWN_TOKEN" "{\"org_id\":\"$ORG\"}"
BOB_TOKEN="$(jq -r .access_token <<<"$BODY")"
call GET /org "$BOB_TOKEN"

echo "## Alice changes Bob's role: viewer, then member again"
call PATCH "/org/members/$BOB_MEMBER" "$ALICE_TOKEN" '{"role":"viewer"}'
call POST /inboxes "$BOB_TOKEN" "{\"username\":\"bob-$RUN\"}"
call PATCH "/org/members/$BOB_MEMBER" "$ALICE_TOKEN" '{"role":"member"}'

echo "## A staging environment with its own key and inbox; the production key cannot see it"
call POST /keys "$ALICE_TOKEN" '{"name":"production agent"}'
PROD_KEY="$(jq -r .key <<<"$BODY")"
call POST /environments "$ALICE_TOKEN" '{"name":"staging"}'
STAGING="$(jq -r .id <<<"$BODY")"
call POST /keys "$ALICE_TOKEN" "{\"name\":\"staging agent\",\"env_id\":\"$STAGING\"}"
STAGING_KEY="$(jq -r .key <<<"$BODY")"
call POST /inboxes "$STAGING_KEY" "{\"username\":\"staging-agent-$RUN\"}"
STAGING_INBOX="$(jq -r .inbox_id <<<"$BODY")"
call GET "/inboxes/$STAGING_INBOX" "$STAGING_KEY"
call GET "/inboxes/$STAGING_INBOX" "$PROD_KEY"
call GET /inboxes "$PROD_KEY"
call GET /inboxes "$PROD_KEY" "" -H "X-Env-Id: $STAGING"

echo "## Bob sees only the environments he belongs to"
call GET /environments "$BOB_TOKEN"
call GET "/environments/$STAGING" "$BOB_TOKEN"
call POST "/environments/$STAGING/members" "$ALICE_TOKEN" "{\"member_id\":\"$BOB_MEMBER\"}"
call GET /environments "$BOB_TOKEN"
call GET "/inboxes/$STAGING_INBOX" "$BOB_TOKEN" "" -H "X-Env-Id: $STAGING"

echo "## The plan: usage, one environment too many, an upgrade request"
call GET /org/usage "$ALICE_TOKEN"
call POST /environments "$ALICE_TOKEN" '{"name":"qa"}'
call POST /org/upgrade-request "$ALICE_TOKEN" '{"plan":"pro","message":"we need a qa environment"}'
call GET /org/upgrade-requests "$BOB_TOKEN"

echo "## Alice hands the organization to Bob; Bob accepts"
call POST /org/transfer-ownership "$ALICE_TOKEN" "{\"member_id\":\"$BOB_MEMBER\"}"
TRANSFER="$(jq -r .id <<<"$BODY")"
call GET /org/transfer-ownership/pending "$BOB_TOKEN"
call POST "/org/transfer-ownership/$TRANSFER/accept" "$BOB_TOKEN"
call GET /org/members "$BOB_TOKEN"

echo "## Bob removes Alice: her token is refused within a second"
ALICE_MEMBER="$(jq -r --arg org "$ORG" '.data[] | select(.role == "admin") | .id' <<<"$BODY")"
call DELETE "/org/members/$ALICE_MEMBER" "$BOB_TOKEN"
removed_at=$(date +%s%N)
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$API/org" -H "Authorization: Bearer $ALICE_TOKEN")" = 401 ]; do
  [ $(( ($(date +%s%N) - removed_at) / 1000000 )) -lt 5000 ] || { echo "still accepted after 5 s" >&2; exit 1; }
done
echo "Alice's token refused $(( ($(date +%s%N) - removed_at) / 1000000 )) ms after the removal answered" >&2
call GET /org "$ALICE_TOKEN"
