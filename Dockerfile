# syntax=docker/dockerfile:1
#
# Shortlist as a container image: the API (`serve`) and the extraction worker
# (`worker`) are the same image with a different command. See docs/deploy.md.
#
#   docker build -t shortlist .
#   docker run --rm -p 8000:8000 -e DATABASE_URL=postgresql://… shortlist
#
# scripts/check-deploy builds and installs the wheel the same way (pip wheel,
# then pip install into a fresh venv) and runs the entry points, since CI has
# no Docker engine.

ARG PYTHON_VERSION=3.11

# --- build: the project's wheel and every dependency's wheel -------------------
FROM python:${PYTHON_VERSION}-slim-bookworm AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_INPUT=1

WORKDIR /src
# Only what the wheel is made of (hatchling reads the readme named in pyproject.toml).
COPY pyproject.toml README.md ./
COPY service ./service
COPY extract ./extract
COPY retrieval ./retrieval
COPY sql ./sql

# One directory of wheels: the runtime stage installs from it with no index, so
# the runtime image never talks to PyPI and carries no build tooling.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip wheel --wheel-dir /wheels .

# --- runtime: a venv with the wheel installed, run as an unprivileged user ------
FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime

LABEL org.opencontainers.image.title="Shortlist" \
      org.opencontainers.image.description="Document search for AI assistants: extract once, shortlist with BM25, rerank, cite to the page." \
      org.opencontainers.image.licenses="AGPL-3.0-or-later"

ENV PATH=/opt/shortlist/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    SHORTLIST_DATA_DIR=/data \
    SHORTLIST_SERVER__HOST=0.0.0.0 \
    SHORTLIST_SERVER__PORT=8000

RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m venv /opt/shortlist \
    && /opt/shortlist/bin/pip install --no-cache-dir --no-index --find-links /wheels shortlist \
    && groupadd --system --gid 10001 shortlist \
    && useradd --system --uid 10001 --gid shortlist --create-home --home-dir /home/shortlist shortlist \
    && mkdir -p /data \
    && chown shortlist:shortlist /data

# A named volume mounted here starts with this directory's owner, so the
# unprivileged user can write generated keys (and, without DATABASE_URL or an
# S3 bucket, the embedded PostgreSQL and the local blob store).
VOLUME ["/data"]
WORKDIR /home/shortlist
USER shortlist:shortlist

EXPOSE 8000

# No curl in slim images: ask /api/health with the standard library. 200 means
# the database answers; 503 (or no answer) marks the container unhealthy.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/api/health/ready' % os.environ.get('SHORTLIST_SERVER__PORT', '8000'), timeout=4)"]

ENTRYPOINT ["shortlist"]
CMD ["serve", "--host", "0.0.0.0", "--no-worker"]
