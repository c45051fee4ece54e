#!/usr/bin/env bash
set -euo pipefail
BASE=${INBOX_URL:-http://localhost:3000}
mkdir -p state
cursor=$(cat state/cursor 2>/dev/null || true)
while true; do
  status=$(curl -sS -o state/page -w '%{http_code}' -H "Authorization: Bearer $INBOX_API_TOKEN" \
    "$BASE/api/v1/payment-events?limit=500&after=$cursor") || { sleep 5; continue; }
  if [[ $status == 409 ]]; then cursor=; continue; fi         # a cursor of another cluster: from the start
  if [[ $status != 200 ]]; then sleep 5; continue; fi
  page=$(cat state/page)
  while read -r event; do
    key=$(jq -r '"\(.payment.provider)_\(.payment.charge_id)"' <<<"$event")
    sequence=$(jq -r .sequence <<<"$event")
    applied=$(cat "state/$key" 2>/dev/null || echo 0)
    if (( sequence <= applied )); then continue; fi            # a repeat: already applied
    if (( sequence != applied + 1 )); then echo "gap before $key #$sequence" >&2; exit 1; fi
    jq -c '{charge: .payment.charge_id, status: .payment.status, refunded: .payment.amount_refunded, seq: .sequence}' <<<"$event"  # apply it here
    echo "$sequence" > "state/$key"
  done < <(jq -c '.events[]' <<<"$page")
  cursor=$(jq -r .next_cursor <<<"$page")
  echo "$cursor" > state/cursor
  if [[ $(jq '.events | length' <<<"$page") -eq 0 ]]; then sleep 2; fi
done
