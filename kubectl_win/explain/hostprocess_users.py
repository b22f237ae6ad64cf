"""Who a HostProcess container may run as (knowledge/field_rules.yaml hostprocess_users): explain's rule, doctor's
on live pods (it lints them with explain's rules) and scaffold's refusal, from the one list."""

from __future__ import annotations

from functools import cache

from kubectl_win.knowledge import load


def _key(name: str) -> str:
    """Windows compares account names without case; "Local service" and "LocalService" are one account."""
    return "".join(name.split()).lower()


@cache
def _data() -> dict:
    return load("field_rules")["hostprocess_users"]


@cache
def service_accounts() -> tuple[str, ...]:
    """The accounts a HostProcess container may run as on any node, spelt DOMAIN\\USER."""
    domain = _data()["service_domain"]
    return tuple(f"{domain}\\{entry['name']}" for entry in _data()["service_accounts"])


def canonical(value: str) -> str | None:
    """The service account `value` names, in its listed spelling; None when it names none."""
    wanted = _key(value)
    return next((account for account in service_accounts() if _key(account) == wanted), None)


def hostprocess_user_problem(value: str) -> str | None:
    """Why a HostProcess container cannot run as `value`, or None: a service account, or a name without a domain
    that may be a local group of the node (containerd 1.7+), which only the node can confirm."""
    domain, backslash, _user = value.rpartition("\\")
    choices = ", ".join(service_accounts())
    if backslash:
        if canonical(value) is not None:
            return None
        if _key(domain) == _key(_data()["service_domain"]):
            return f"{value} is not one of the service accounts a HostProcess container can run as ({choices})"
        return (f"{value} is a user account, which the runtime cannot log on to the host without a password "
                f"(use {choices}, or a local group of the node)")
    for entry in _data()["container_accounts"]:
        if _key(entry["name"]) == _key(value):
            return (f"{entry['name']} is an account of Windows container images, which does not exist on the host "
                    f"a HostProcess container runs on (use {choices}, or a local group of the node)")
    return None
