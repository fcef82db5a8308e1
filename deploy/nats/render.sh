#!/bin/sh
# Renders the NATS server config for a bus prefix (BUS_PREFIX): prints nats-server.conf.template with
# ${BUS_PREFIX} replaced. Passwords stay $NATS_..._PASSWORD references, read by nats-server from its
# environment when it starts.
#   deploy/nats/render.sh [prefix] > nats-server.conf     (prefix: argument, else $BUS_PREFIX, else pay)
set -eu
prefix="${1:-${BUS_PREFIX:-pay}}"
case "$prefix" in
  '' | *[!A-Za-z0-9_-]*)
    echo "render.sh: the bus prefix must be letters, digits, _ or - (got '$prefix')" >&2
    exit 2
    ;;
esac
sed "s/\${BUS_PREFIX}/$prefix/g" "$(dirname "$0")/nats-server.conf.template"
