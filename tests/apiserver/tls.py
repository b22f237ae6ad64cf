"""A throwaway PKI for HTTPS mode: a CA, a server certificate for 127.0.0.1/localhost, a client cert."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _write(path: Path, data: bytes, secret: bool = False) -> Path:
    path.write_bytes(data)
    if secret:
        os.chmod(path, 0o600)
    return path


def generate(directory: Path, client_user: str = "admin", client_groups: tuple[str, ...] = ("system:masters",)) -> Pki:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    start, end = now - dt.timedelta(minutes=5), now + dt.timedelta(days=2)

    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    def pem_key(k: ec.EllipticCurvePrivateKey) -> bytes:
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())

    ca_key = key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubectl-win-test-ca")])
    ca_cert = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                            content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False,
                                            encipher_only=False, decipher_only=False), critical=True)
               .sign(ca_key, hashes.SHA256()))

    def leaf(subject: x509.Name, usage: x509.ObjectIdentifier, san: list | None) -> tuple[bytes, bytes]:
        k = key()
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name)
                   .public_key(k.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(end)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), pem_key(k)

    server_pem, server_key = leaf(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]), ExtendedKeyUsageOID.SERVER_AUTH,
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client_subject = [x509.NameAttribute(NameOID.COMMON_NAME, client_user)]
    client_subject += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in client_groups]
    client_pem, client_key = leaf(x509.Name(client_subject), ExtendedKeyUsageOID.CLIENT_AUTH, None)

    return Pki(
        ca_cert=_write(directory / "ca.crt", ca_cert.public_bytes(serialization.Encoding.PEM)),
        server_cert=_write(directory / "server.crt", server_pem),
        server_key=_write(directory / "server.key", server_key, secret=True),
        client_cert=_write(directory / "client.crt", client_pem),
        client_key=_write(directory / "client.key", client_key, secret=True),
    )
