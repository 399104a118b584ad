#!/usr/bin/env bash
# Starts the machine's PostgreSQL and Redis when they are down (Debian packages, as root).
set -euo pipefail
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  else
    echo "PostgreSQL is not reachable at 127.0.0.1:5432 and cannot be started here" >&2
    exit 1
  fi
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  if command -v redis-server >/dev/null 2>&1; then
    echo "starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  else
    echo "Redis is not reachable at 127.0.0.1:6379 and cannot be started here" >&2
    exit 1
  fi
fi
for _ in $(seq 1 50); do
  if pg_isready -q -h 127.0.0.1 -p 5432 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then exit 0; fi
  sleep 0.2
done
echo "PostgreSQL or Redis did not come up" >&2
exit 1
