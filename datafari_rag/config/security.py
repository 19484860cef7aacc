"""Security: who the user is, which tokens they hold, sign-in, secrets."""

from __future__ import annotations

from dataclasses import dataclass

from .keys import SECURITY, key


@dataclass(frozen=True)
class SecuritySettings:
    """Identity, tokens, sign-in, secrets (security.*)."""

    anonymous_allowed: bool = key(
        SECURITY,
        "security.anonymous.allowed",
        True,
        "Users with no JWT and no trusted header see only fully public documents; false refuses them.",
    )
    users_min_password: int = key(
        SECURITY,
        "users.minPasswordLength",
        12,
        "Local users (kept in the store, store.url): the shortest password accepted.",
        minimum=8,
        maximum=1024,
    )
    users_token_ttl: int = key(
        SECURITY,
        "users.tokenTtl",
        3600,
        "Local users: seconds a token from POST …/auth/login is valid (signed with security.jwt.hs256.secret).",
        minimum=60,
        maximum=7 * 24 * 3600,
    )
    secrets_key: str = key(
        SECURITY,
        "security.secretsKey",
        "",
        "The key(s) sealing secrets kept in the relational store (Fernet keys, comma-separated: the "
        "first seals, any opens); empty: the key in security.secretsKeyFile.",
    )
    secrets_key_file: str = key(
        SECURITY,
        "security.secretsKeyFile",
        "",
        "Where the generated sealing key is kept (mode 0600); empty: var/secrets/store.key.",
    )
    sign_in_max_failures: int = key(
        SECURITY,
        "users.signIn.maxFailures",
        5,
        "Local users: refused sign-ins of one username within users.signIn.window after which every "
        "sign-in of it waits (HTTP 429 with Retry-After), the right password too.",
        minimum=1,
        maximum=1000,
    )
    sign_in_max_failures_per_address: int = key(
        SECURITY,
        "users.signIn.maxFailuresPerAddress",
        30,
        "Local users: refused sign-ins from one address (any usernames) within users.signIn.window "
        "after which every sign-in from it waits.",
        minimum=1,
        maximum=100000,
    )
    sign_in_window: int = key(
        SECURITY,
        "users.signIn.window",
        900,
        "Local users: seconds a refused sign-in is counted by the throttle.",
        minimum=1,
        maximum=7 * 24 * 3600,
    )
    jwt_hs256_secret: str = key(
        SECURITY, "security.jwt.hs256.secret", "", "JWT in 'Authorization: Bearer': the HS256 secret."
    )
    jwt_public_key_file: str = key(SECURITY, "security.jwt.publicKeyFile", "", "JWT: a PEM public key (RS256/ES256).")
    jwt_jwks_file: str = key(SECURITY, "security.jwt.jwksFile", "", "JWT: a JWKS file.")
    jwt_algorithms: str = key(
        SECURITY, "security.jwt.algorithms", "RS256,ES256", "JWT: asymmetric algorithms accepted."
    )
    jwt_issuer: str = key(SECURITY, "security.jwt.issuer", "", "JWT: the issuer required (empty: not checked).")
    jwt_audience: str = key(
        SECURITY,
        "security.jwt.audience",
        "",
        "JWT: the audience required (empty: not checked). Expiry is always checked.",
    )
    jwt_username_claim: str = key(
        SECURITY, "security.jwt.usernameClaim", "preferred_username", "JWT: the claim holding the username (else sub)."
    )
    jwt_groups_claim: str = key(SECURITY, "security.jwt.groupsClaim", "", "JWT: the claim holding the user's groups.")
    login_url: str = key(
        SECURITY,
        "security.loginUrl",
        "",
        "Where DatafariUI's 'log in' link (v1.0/auth) sends a visitor: the identity provider's sign-in page "
        "(empty: this sidecar's /ui/ page, which signs in local accounts).",
    )
    trusted_header: str = key(
        SECURITY, "security.trustedHeader", "", "A header set by a reverse proxy (e.g. X-Remote-User) naming the user."
    )
    trusted_proxies: str = key(
        SECURITY, "security.trustedProxies", "", "The addresses (comma-separated) the trusted header is accepted from."
    )
    strip_domain: bool = key(
        SECURITY, "security.username.stripDomain", True, "Datafari's normalisation: strip 'DOMAIN\\'."
    )
    append_domain: str = key(
        SECURITY, "security.username.appendDomain", "", "Datafari's normalisation: append '@domain'."
    )
    authority_url: str = key(
        SECURITY,
        "security.authority.url",
        "",
        "A ManifoldCF authority service (GET {url}/UserACLs?username=…); empty: the mapping file.",
    )
    authority_timeout: float = key(
        SECURITY,
        "security.authority.timeout",
        5.0,
        "Seconds an authority lookup may take in all (connection and reply, however slowly it comes).",
        minimum=0.1,
    )
    authority_cache_ttl: float = key(
        SECURITY, "security.authority.cacheTtl", 60.0, "Seconds a user's tokens are cached."
    )
    mapping_file: str = key(
        SECURITY,
        "security.mappingFile",
        "conf/acl-mapping.json",
        "Users and groups to tokens, when no authority is configured.",
    )
    groups_as_tokens: bool = key(
        SECURITY,
        "security.groups.asTokens",
        False,
        "JWT groups become tokens themselves (besides the mapping file's groups).",
    )
    update_users: str = key(
        SECURITY,
        "security.update.users",
        "",
        "Who may call POST /update and index/jobs besides the administrators (comma-separated "
        "usernames, identified by JWT or trusted header).",
    )
    admins: str = key(
        SECURITY,
        "security.admins",
        "",
        "Administrators (comma-separated usernames): they may read every user's token statistics.",
    )
    update_trust_local: bool = key(
        SECURITY,
        "security.update.trustLocal",
        False,
        "Callers on this machine may call POST /update with no credential. Off by default: behind a "
        "reverse proxy on the same machine every client would count as local.",
    )

    @property
    def admin_names(self) -> frozenset[str]:
        """The usernames of ``security.admins``."""
        return frozenset(a.strip() for a in self.admins.split(",") if a.strip())
