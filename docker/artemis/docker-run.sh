#!/bin/sh
# Creates the broker instance on the first start (as the upstream image
# does: artemis create --user --password --silent --require-login
# $EXTRA_ARGS), then runs it in the foreground.
set -eu
: "${ARTEMIS_USER:?set ARTEMIS_USER}" "${ARTEMIS_PASSWORD:?set ARTEMIS_PASSWORD}"
instance=/var/lib/artemis-instance
if [ ! -f "$instance/etc/broker.xml" ]; then
	login=--require-login
	if [ "${ANONYMOUS_LOGIN:-false}" = true ]; then
		login=--allow-anonymous
	fi
	# EXTRA_ARGS is a list of options: split on spaces on purpose.
	# shellcheck disable=SC2086
	"$ARTEMIS_HOME/bin/artemis" create --user "$ARTEMIS_USER" --password "$ARTEMIS_PASSWORD" \
		--silent "$login" ${EXTRA_ARGS:-} "$instance"
fi
exec "$instance/bin/artemis" run
