"""rldp.admin — the operator's SDK and commands: publish, label, retire, collections, design jobs.

    from rldp.admin import AdminClient

    admin = AdminClient("https://agg.example", token=admin_token)
    mechanism = admin.publish(document, label="app-usage v1")["id"]
    admin.create_collection("app-usage", mechanism, {"notion": "rldp", "epsilon": 1.0})

An app embeds :mod:`rldp.client` only, which never imports this package (an import contract
keeps it so). The ``rldp`` command's operator commands (``rldp publish``, ``mechanisms``,
``estimate``, ``retire``, ``jobs``, ``job``, ``collections``, ``collection``, ``token``) live here too.
Depends on rldp.client (its transport and errors) and rldp.shared only.
"""

from .calls import AdminClient

__all__ = ["AdminClient"]
