"""The TLS context of a crawl's https:// requests: the CAs it trusts (``CrawlConfig.ca_bundle``,
``--ca-bundle``; else OpenSSL's defaults, which read ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``)."""

from __future__ import annotations

import ssl

from ._exceptions import ConfigError


def tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """A client context verifying certificates and host names against the CA certificates of
    the PEM file ``ca_bundle`` alone (as curl's ``--cacert``), or, for None, against the
    system's (``SSL_CERT_FILE`` when set). A file that cannot be read or holds no certificate
    is a :class:`ConfigError` naming it."""
    if ca_bundle is None:
        return ssl.create_default_context()
    try:
        context = ssl.create_default_context(cafile=ca_bundle)
    except FileNotFoundError:
        raise ConfigError(f"CA bundle {ca_bundle}: no such file") from None
    except ssl.SSLError as exc:  # (not PEM, or no certificate in it)
        raise ConfigError(f"CA bundle {ca_bundle}: no CA certificate read ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(f"CA bundle {ca_bundle}: {exc.strerror or exc}") from None
    if not context.get_ca_certs():
        raise ConfigError(f"CA bundle {ca_bundle}: no CA certificate in it")
    return context
