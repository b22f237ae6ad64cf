"""Authentication (bearer tokens, client certificates) and per-resource RBAC denials."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DenyRule:
    verb: str  # "*" for every verb
    resource: str  # plural, or "plural/subresource"; "*" for every resource
    namespace: str | None = None  # None: every namespace and cluster scope
    user: str | None = None  # None: every user


@dataclass
class Auth:
    """Who may talk to the server. With no tokens and no client CA, every request is anonymous-admin."""

    tokens: dict[str, str] = field(default_factory=dict)  # token -> user name
    expired_tokens: set[str] = field(default_factory=set)
    client_ca: bool = False  # HTTPS with a client CA: verified certificates authenticate as their CN
    denials: list[DenyRule] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def enabled(self) -> bool:
        return bool(self.tokens) or self.client_ca

    def add_token(self, token: str, user: str = "admin") -> None:
        self.tokens[token] = user
        self.expired_tokens.discard(token)

    def expire_token(self, token: str) -> None:
        self.expired_tokens.add(token)

    def authenticate(self, authorization: str | None, peer_cert: dict | None) -> str | None:
        """The user name, or None when the request must get 401."""
        if not self.enabled:
            return "system:anonymous-admin"
        if authorization:
            # Like kube-apiserver's union authenticator: a bad token can still be saved by a good certificate.
            scheme, _, token = authorization.partition(" ")
            token = token.strip()
            if scheme.lower() == "bearer" and token not in self.expired_tokens and token in self.tokens:
                return self.tokens[token]
        if peer_cert and self.client_ca:
            for rdn in peer_cert.get("subject", ()):
                for key, value in rdn:
                    if key == "commonName":
                        return value
        return None

    def deny(self, verb: str, resource: str, namespace: str | None = None, user: str | None = None) -> DenyRule:
        rule = DenyRule(verb, resource, namespace, user)
        with self._lock:
            self.denials.append(rule)
        return rule

    def clear_denials(self) -> None:
        with self._lock:
            self.denials.clear()

    def allowed(self, user: str, verb: str, resource: str, namespace: str | None) -> bool:
        for rule in list(self.denials):
            if rule.verb not in ("*", verb):
                continue
            if rule.resource not in ("*", resource):
                continue
            if rule.namespace is not None and rule.namespace != namespace:
                continue
            if rule.user is not None and rule.user != user:
                continue
            return False
        return True


def forbidden_message(user: str, verb: str, plural: str, group: str, namespace: str | None,
                      name: str | None = None, subresource: str | None = None) -> str:
    """Worded like kube-apiserver's RBAC denial."""
    what = f'{plural}.{group}' if group else plural
    subject = f'{what} "{name}"' if name else what
    resource = f"{plural}/{subresource}" if subresource else plural
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (f'{subject} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
            f'in API group "{group}" {scope}')
