"""Local users in the relational store, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from datafari_rag.store.database import migrate, open_engine
from datafari_rag.store.users import UserError, UserStore

PASSWORD = "correct horse battery"


@pytest.fixture
def store(database_url: str) -> UserStore:
    engine = open_engine(database_url)
    migrate(engine)
    return UserStore(engine, min_password=12)


def test_a_user_signs_in_with_their_password_only(store: UserStore) -> None:
    created = store.create("ada", PASSWORD, admin=True)
    assert created.username == "ada" and created.admin
    assert store.verify("ada", PASSWORD) == created
    assert store.verify("ada", PASSWORD + "!") is None
    assert store.verify("nobody", PASSWORD) is None
    assert store.verify(None, None) is None and store.verify("x" * 5000, "y" * 5000) is None


def test_passwords_are_stored_as_argon2id_hashes(store: UserStore) -> None:
    store.create("ada", PASSWORD)
    store.create("bob", PASSWORD)
    with store.sessions() as session:
        hashes = [row[0] for row in session.execute(text("SELECT password_hash FROM app_user ORDER BY username"))]
    assert all(h.startswith("$argon2id$") and PASSWORD not in h for h in hashes)
    assert hashes[0] != hashes[1]  # salted: the same password, two hashes


@pytest.mark.parametrize(
    ("username", "password", "label"),
    [
        ("", PASSWORD, "userBadRequest"),
        ("bad name", PASSWORD, "userBadRequest"),
        ("-dash", PASSWORD, "userBadRequest"),
        ("x" * 101, PASSWORD, "userBadRequest"),
        (42, PASSWORD, "userBadRequest"),
        ("ok", "short", "userBadRequest"),
        ("ok", None, "userBadRequest"),
        ("ok", "p" * 1025, "userBadRequest"),
    ],
)
def test_bad_names_and_passwords_are_refused_and_nothing_is_saved(
    store: UserStore, username: object, password: object, label: str
) -> None:
    with pytest.raises(UserError) as refused:
        store.create(username, password)
    assert refused.value.label == label and store.list() == []


def test_update_delete_and_the_last_administrator(store: UserStore) -> None:
    store.create("ada", PASSWORD, admin=True)
    store.create("bob", PASSWORD)
    with pytest.raises(UserError, match="taken"):
        store.create("bob", PASSWORD)
    assert store.update("bob", password="another long secret").username == "bob"
    assert store.verify("bob", "another long secret") and not store.verify("bob", PASSWORD)
    with pytest.raises(UserError, match="last administrator"):
        store.update("ada", admin=False)
    with pytest.raises(UserError, match="last administrator"):
        store.delete("ada")
    assert store.update("bob", admin=True).admin
    store.update("ada", admin=False)  # bob is an administrator now
    store.delete("ada")
    assert [u.username for u in store.list()] == ["bob"]
    for call in (lambda: store.delete("ada"), lambda: store.update("ada", password=PASSWORD)):
        with pytest.raises(UserError) as missing:
            call()
        assert missing.value.label == "userNotFound"
    with pytest.raises(UserError, match="Nothing to change"):
        store.update("bob")


def test_the_users_command_creates_lists_and_deletes(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from datafari_rag.cli import main as cli

    monkeypatch.setenv("DATAFARI_RAG_STORE_URL", f"sqlite:///{tmp_path / 'users.db'}")
    run = CliRunner()
    added = run.invoke(cli, ["users", "add", "ada", "--admin", "--password-stdin"], input=PASSWORD + "\n")
    assert added.exit_code == 0 and "created ada (administrator)" in added.output
    weak = run.invoke(cli, ["users", "add", "bob", "--password-stdin"], input="short\n")
    assert weak.exit_code == 1 and "A password is 12 to 1024 characters." in weak.output
    listed = run.invoke(cli, ["users", "list"])
    assert listed.output.startswith("ada\tadmin\t") and PASSWORD not in listed.output
    last = run.invoke(cli, ["users", "delete", "ada"])
    assert last.exit_code == 1 and "last administrator" in last.output


def test_a_later_start_names_the_command_that_replaces_a_lost_password(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Passwords are shown once, at the first start; a later banner says how to set a new one,
    and the command it names does."""
    import shlex

    from click.testing import CliRunner

    from datafari_rag.cli import main as cli
    from datafari_rag.cli import sign_in_lines

    made = ["  administrator: admin / secret"]
    assert sign_in_lines(made) == made
    [hint] = sign_in_lines([])
    command = shlex.split(hint.split(": ", 1)[1].replace("NAME", "ada"))[1:]  # after ./datafari-rag
    monkeypatch.setenv("DATAFARI_RAG_STORE_URL", f"sqlite:///{tmp_path / 'users.db'}")
    run = CliRunner()
    run.invoke(cli, ["users", "add", "ada", "--admin", "--password-stdin"], input=PASSWORD + "\n")
    renewed = run.invoke(cli, [*command, "--password-stdin"], input=PASSWORD[::-1] + "\n")
    assert renewed.exit_code == 0, renewed.output
    assert UserStore(open_engine(f"sqlite:///{tmp_path / 'users.db'}")).verify("ada", PASSWORD[::-1])
