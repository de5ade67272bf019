#!/bin/sh
# Writes the secrets docker-compose.yml needs to an env file (default .env
# at the repository top, where compose reads it), once: an existing file is
# left alone, so restarts keep the same master key and passwords. The file
# is created mode 0600 and is git-ignored.
set -eu
file=${1:-.env}
# rand N: N random bytes as letters and digits (safe in URLs and YAML).
rand() { head -c "$1" /dev/urandom | base64 | tr -dc 'A-Za-z0-9'; }
umask 077
if [ -e "$file" ]; then
  # An older file lacks the passwords of NATS users added since: add them.
  for user in PAPER_VENUE; do
    if ! grep -q "^NATS_${user}_PASSWORD=" "$file"; then
      echo "NATS_${user}_PASSWORD=p$(rand 24)" >>"$file"
      echo "added NATS_${user}_PASSWORD to $file"
    fi
  done
  echo "$file exists; keeping it"
  exit 0
fi
{
  echo "# perpgate compose secrets, generated $(date -u +%Y-%m-%dT%H:%M:%SZ) by deploy/compose-env.sh"
  echo "PERPGATE_MASTER_KEY=$(head -c 32 /dev/urandom | base64)"
  echo "PERPGATE_ADMIN_TOKEN=$(rand 24)"
  echo "POSTGRES_PASSWORD=$(rand 24)"
  for user in EDGE KEYS PAPER_VENUE CONNECTOR_PAPER CONNECTOR_BINANCE CONNECTOR_BYBIT CONNECTOR_OKX CONNECTOR_PARADEX CONNECTOR_ASTER CONNECTOR_HYPERLIQUID; do
    # A leading letter: nats-server's config parser reads a value that starts
    # with a digit as a number and refuses to start.
    echo "NATS_${user}_PASSWORD=p$(rand 24)"
  done
} >"$file"
echo "wrote $file"
