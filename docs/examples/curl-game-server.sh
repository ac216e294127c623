#!/bin/sh
# A Roomkeeper game server in curl: pings ready every PING_INTERVAL_S (default 5) seconds ±10 %,
# occupied while $MATCH_FILE exists, and terminating then terminated on SIGTERM; exits when an
# answer says roomGone (the room is gone for good: nothing more to ping, terminated included).
: "${ROOMKEEPER_ROOMS_API_URL:?set by the operator}" "${ROOMKEEPER_SCHEDULER_NAME:=$MAESTRO_SCHEDULER_NAME}" "${ROOMKEEPER_ROOM_ID:=$MAESTRO_ROOM_ID}"
URL="$ROOMKEEPER_ROOMS_API_URL/scheduler/$ROOMKEEPER_SCHEDULER_NAME/rooms/$ROOMKEEPER_ROOM_ID/ping"
ping() {
  answer=$(curl -sS --max-time 5 -X PUT "$URL" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $ROOMKEEPER_ROOM_TOKEN" -d "{\"status\":\"$1\",\"timestamp\":$(date +%s)}")
  echo "$1 -> $answer"
  case $answer in *'"roomGone":true'*) exit 0;; esac
}
# terminated is answered {"success":true} only once recorded: sent again until then (5 tries at most).
stop() { ping terminating; for _ in 1 2 3 4 5; do ping terminated; case $answer in *'"success":true'*) break;; esac; sleep "${PING_INTERVAL_S:-5}"; done; exit 0; }
trap stop TERM INT
while :; do
  if [ -e "${MATCH_FILE:-/tmp/match}" ]; then ping occupied; else ping ready; fi
  sleep "$(awk -v i="${PING_INTERVAL_S:-5}" 'BEGIN { srand(); printf "%.2f", i * (0.9 + 0.2 * rand()) }')" &
  wait $!
done
