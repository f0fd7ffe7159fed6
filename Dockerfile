# pslab with everything it runs itself: the Go binary (which embeds
# nats-server), a Java runtime, and the ActiveMQ Artemis distribution in the
# Maven cache, from which `pslab broker install artemis` (or the first run
# on Artemis) creates a broker instance without network access.
# Used by docker-compose.yml (service pslab) where an image registry is
# reachable (golang, maven and eclipse-temurin images). With no registry,
# docker/build-local.sh pslab builds the same image from docker/pslab/
# (pslab built on the host, a Debian Java base made with debootstrap), and
# compose uses it (docs/containers.md). Only that offline path was built
# here: these machines reach no image registry.

ARG GO_VERSION=1.26
ARG ARTEMIS_VERSION=2.44.0

# 1. Build pslab (static, no cgo).
FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/pslab ./cmd/pslab

# 2. Fetch the Artemis distribution through Maven (checksummed by Maven).
FROM maven:3.9-eclipse-temurin-17 AS artemis
ARG ARTEMIS_VERSION
RUN mvn -B -q dependency:get \
      -Dartifact=org.apache.activemq:apache-artemis:${ARTEMIS_VERSION}:tar.gz:bin \
      -Dtransitive=false

# 3. Runtime: Java 17 for Artemis, pslab, the distribution, the scenarios.
FROM eclipse-temurin:17-jre
ARG ARTEMIS_VERSION
COPY --from=build /out/pslab /usr/local/bin/pslab
COPY --from=artemis /root/.m2/repository/org/apache/activemq/apache-artemis/${ARTEMIS_VERSION}/ \
     /root/.m2/repository/org/apache/activemq/apache-artemis/${ARTEMIS_VERSION}/
WORKDIR /work
COPY scenarios/ ./scenarios/
ENTRYPOINT ["pslab"]
CMD ["doctor"]
