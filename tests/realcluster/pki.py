"""Certificates for a real kube-apiserver: one CA for serving and client certificates, and a
service-account signing key. Client certificates carry the user as CN and the groups as O, which is
how kube-apiserver's x509 authenticator reads them."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path


def _write(path: Path, data: bytes, secret: bool = False) -> Path:
    path.write_bytes(data)
    if secret:
        os.chmod(path, 0o600)
    return path


@dataclass(frozen=True)
class ClientCert:
    cert: Path
    key: Path


class ClusterPki:
    """A CA under `directory`, with the apiserver's serving certificate and its SA signing key."""

    def __init__(self, directory: Path) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self.directory = directory
        self._issued: dict[tuple[str, tuple[str, ...]], ClientCert] = {}
        directory.mkdir(parents=True, exist_ok=True)
        now = dt.datetime.now(dt.UTC)
        self._start, self._end = now - dt.timedelta(minutes=5), now + dt.timedelta(days=7)
        self._ca_key = ec.generate_private_key(ec.SECP256R1())
        self._ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubectl-win-realcluster-ca")])
        ca = (x509.CertificateBuilder().subject_name(self._ca_name).issuer_name(self._ca_name)
              .public_key(self._ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(self._start).not_valid_after(self._end)
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False,
                                           data_encipherment=False, key_agreement=False,
                                           encipher_only=False, decipher_only=False), critical=True)
              .sign(self._ca_key, hashes.SHA256()))
        self.ca_cert = _write(directory / "ca.crt", self._pem(ca))
        serving = self._leaf("kube-apiserver", (), server=True)
        self.serving_cert, self.serving_key = serving.cert, serving.key
        sa_key = ec.generate_private_key(ec.SECP256R1())
        self.sa_key = _write(directory / "sa.key", self._pem_key(sa_key), secret=True)
        from cryptography.hazmat.primitives import serialization

        self.sa_pub = _write(directory / "sa.pub", sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    @staticmethod
    def _pem(cert) -> bytes:  # noqa: ANN001 - a cryptography Certificate
        from cryptography.hazmat.primitives import serialization

        return cert.public_bytes(serialization.Encoding.PEM)

    @staticmethod
    def _pem_key(key) -> bytes:  # noqa: ANN001 - a cryptography private key
        from cryptography.hazmat.primitives import serialization

        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())

    def _leaf(self, name: str, groups: tuple[str, ...], server: bool = False) -> ClientCert:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        subject = [x509.NameAttribute(NameOID.COMMON_NAME, name)]
        subject += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (x509.CertificateBuilder().subject_name(x509.Name(subject)).issuer_name(self._ca_name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(self._start).not_valid_after(self._end)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        cert = builder.sign(self._ca_key, hashes.SHA256())
        stem = "serving" if server else f"user-{name}-{len(self._issued)}"
        return ClientCert(_write(self.directory / f"{stem}.crt", self._pem(cert)),
                          _write(self.directory / f"{stem}.key", self._pem_key(key), secret=True))

    def client(self, user: str, groups: tuple[str, ...] = ()) -> ClientCert:
        """A client certificate for `user` in `groups` (system:masters makes an admin), issued once: the
        files stay valid for every kubeconfig that names them."""
        issued = self._issued.get((user, groups))
        if issued is None:
            issued = self._issued[(user, groups)] = self._leaf(user, groups)
        return issued
