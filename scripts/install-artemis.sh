#!/usr/bin/env bash
# Fetch the ActiveMQ Artemis binary distribution into the local Maven
# repository (~/.m2), which is the download cache pslab installs from.
# After this, `pslab broker install artemis` (or the first run on Artemis,
# or the integration tests) unpacks it and creates a broker instance
# without touching the network. Needs Maven and Maven Central.
#
#   scripts/install-artemis.sh            # version 2.44.0
#   ARTEMIS_VERSION=2.44.0 scripts/install-artemis.sh
set -euo pipefail
version="${ARTEMIS_VERSION:-2.44.0}"
artifact="org.apache.activemq:apache-artemis:${version}:tar.gz:bin"
tarball="${HOME}/.m2/repository/org/apache/activemq/apache-artemis/${version}/apache-artemis-${version}-bin.tar.gz"

if [ -f "$tarball" ]; then
  echo "artemis ${version}: already in the Maven cache: ${tarball}"
  exit 0
fi
if ! command -v mvn >/dev/null 2>&1; then
  echo "artemis: Maven (mvn) is not on PATH: install it (apt-get install maven)" >&2
  exit 1
fi
if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  echo "artemis: java is not on PATH: install a JDK or JRE 17+ (apt-get install openjdk-17-jre-headless)" >&2
  exit 1
fi
echo "artemis ${version}: fetching ${artifact} with Maven"
if ! mvn -B -q dependency:get -Dartifact="${artifact}" -Dtransitive=false; then
  echo "artemis: Maven could not fetch ${artifact}: check that Maven Central is reachable (proxy settings in ~/.m2/settings.xml)" >&2
  exit 1
fi
if [ ! -f "$tarball" ]; then
  echo "artemis: Maven succeeded but ${tarball} is missing (a custom localRepository in settings.xml?)" >&2
  exit 1
fi
echo "artemis ${version}: ${tarball}"
