# The image `kubectl win scaffold monitor --image` runs: the plugin installed from its wheel.
#   python -m pip wheel --no-deps --wheel-dir dist .
#   docker build -f docs/monitor.Dockerfile -t registry.example.com/kubectl-win:0.1.0 .
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

COPY dist/kubectl_win-*.whl /tmp/
RUN pip install --no-cache-dir /tmp/kubectl_win-*.whl \
    && rm /tmp/kubectl_win-*.whl

# Numeric, so the Deployment's runAsNonRoot can be checked by the kubelet; the same as its runAsUser.
USER 65532:65532
EXPOSE 9108
ENTRYPOINT ["kubectl-win"]
CMD ["serve", "--listen", "0.0.0.0:9108"]
