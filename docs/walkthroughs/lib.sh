# Helpers of the walkthroughs: `call` prints a request and its answer, `from_mail` reads the
# mail sink. Sourced by each walkthrough after it sets API and SINK.
# call METHOD PATH TOKEN [JSON] [extra curl args...]: prints the call and its answer, keeps the body in $BODY.
call() {
  local method=$1 path=$2 token=$3 data=${4:-}
  shift 4 || shift $#
  echo "\$ curl -X $method $path${data:+ -d '$data'}${*:+ $*}" >&2
  local args=(-sS -X "$method" "$API$path" -H 'Content-Type: application/json' -w '\n%{http_code}')
  [ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
  [ -n "$data" ] && args+=(-d "$data")
  local out
  out="$(curl "${args[@]}" "$@")"
  STATUS="${out##*$'\n'}"
  BODY="${out%$'\n'*}"
  echo "$STATUS ${BODY:0:600}" >&2
  echo >&2
}

# The newest mail to $1 in the sink, decoded, matched against the Python regex $2 (group 1).
from_mail() {
  python3 - "$SINK" "$1" "$2" <<'PY'
import email, email.policy, glob, os, re, sys, time
sink, to, pattern = sys.argv[1:]
for _ in range(100):
    for path in sorted(glob.glob(os.path.join(sink, '*')), key=os.path.getmtime, reverse=True):
        msg = email.message_from_binary_file(open(path, 'rb'), policy=email.policy.default)
        if to not in str(msg.get('To', '')):
            continue
        body = msg.get_body(preferencelist=('plain',))
        m = re.search(pattern, f"{msg['Subject']}\n{body.get_content() if body else ''}")
        if m:
            print(m.group(1))
            sys.exit(0)
    time.sleep(0.1)
sys.exit(f'no mail to {to} matching {pattern} in {sink}')
PY
}
