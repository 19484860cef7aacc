"""``datafari-rag``: run Solr locally, bootstrap it, serve the agent and the sidecar, or all at once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import urllib3

from .config import KEYS, ConfigError, Settings, convert, env_name, load_settings
from .evaluation import EvaluationInputError
from .indexing.indexer import Indexer
from .paths import CONF, var_dir
from .prompts import ABSTENTIONS
from .registry import RETRIEVAL_MODES
from .services import build_services
from .solr import SolrError
from .solr.bootstrap import SchemaProblem, bootstrap
from .solr.process import RuntimeProblem
from .solr.runtime import LocalCluster, cluster, ensure_jars
from .solr.security_json import SecurityProblem, check_door, write_config
from .solr.service_account import credentials
from .solr.user_properties import service_user


def _clear_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turns the errors a user can cause into one readable line, never a stack trace."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (
            ConfigError,
            SolrError,
            RuntimeProblem,
            SecurityProblem,
            EvaluationInputError,
            SchemaProblem,
        ) as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        raise click.ClickException(f"Configuration error: {exc}") from exc


@click.group()
@click.version_option(package_name="datafari-rag")
def main() -> None:
    """Retrieval-augmented answers over Solr, Datafari RagAPI compatible."""


@main.group()
def solr() -> None:
    """The local Solr 9.10 runtime (Maven Central jars, SolrCloud on ZooKeeper servers of its own)."""


def _cluster(
    port: int | None, count: int | None = None, security_json: Path | None = None, zookeepers: int | None = None
) -> LocalCluster:
    """The local cluster (``count`` nodes, ``zookeepers`` ZooKeeper servers; default: as started
    before), the first node on the given port or the port of solr.url."""
    settings = _settings()
    if count is None:
        count = 1 + len(list(var_dir().glob("solr-node*")))
    if zookeepers is None:
        zookeepers = len(list(var_dir().glob("zookeeper*"))) or None
    base = port or urlsplit(settings.solr_url.split(",")[0]).port or 8983
    return cluster(
        base,
        count,
        settings.solr_heap,
        settings.solr_soft_commit_ms,
        security_json,
        settings.solr_zk_session_ms,
        zookeepers,
    )


INSECURE_WARNING = (
    "WARNING: Solr at {url} runs WITHOUT authentication (--insecure, development only): any client "
    "that reaches it reads every document and may change its configuration."
)


def _security_json(settings: Settings, secure: bool, own: Path | None) -> Path | None:
    """The security.json a local Solr starts with: the administrator's own, the product's (the
    service account's password generated in solr.passwordFile the first time), or none (--insecure)."""
    if own is not None:
        return own
    return write_config(settings, var_dir() / "secrets" / "security.json") if secure else None


@solr.command("start")
@click.option(
    "--port",
    type=int,
    help="Solr port (default: the port of solr.url); ZooKeeper server i listens on port + 1000 + i "
    "(peers on port + 2000 + i, elections on port + 3000 + i).",
)
@click.option(
    "--nodes", type=click.IntRange(1, 8), default=1, show_default=True, help="SolrCloud nodes (ports port, port+1…)."
)
@click.option(
    "--zookeepers",
    type=click.Choice(["1", "3", "5"]),
    help="ZooKeeper servers, each its own process (default: 1 for one node, 3 — an ensemble that "
    "survives losing any one — for several).",
)
@click.option("--timeout", type=float, default=120.0, show_default=True)
@click.option(
    "--security-json",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Start with this security.json (authentication/authorization) instead of the product's.",
)
@click.option(
    "--secure/--insecure",
    default=True,
    show_default=True,
    help="Secure (the default): Solr authenticates from its first request (BasicAuth, the service "
    "account solr.username with solr.password or a generated password in solr.passwordFile); anyone "
    "may search /select and /vector, filtered as who they are; the rest is the service account's. "
    "--insecure: no authentication, for development only.",
)
@_clear_errors
def solr_start(
    port: int | None, nodes: int, zookeepers: str | None, timeout: float, security_json: Path | None, secure: bool
) -> None:
    """Starts Solr in the background (one node, or a cluster on a ZooKeeper ensemble) and waits until it answers."""
    security_json = _security_json(_settings(), secure, security_json)
    local = _cluster(port, nodes, security_json, int(zookeepers) if zookeepers else None)
    local.start(timeout, echo=click.echo)
    if security_json is None:
        for node in local.nodes:
            click.echo(INSECURE_WARNING.format(url=node.url), err=True)
    if nodes > 1:
        click.echo(f"solr.url={local.urls}   (every node: the sidecar fails over when one dies)")


@solr.command("security-json")
@click.option(
    "--output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Where to write it (mode 0600)."
)
@_clear_errors
def solr_security_json(output: Path) -> None:
    """Writes the product's security.json for a Solr to start with (compose writes it to ZooKeeper
    before any node starts); the service account's password is generated in solr.passwordFile
    when none is set, and never printed."""
    settings = _settings()
    write_config(settings, output)
    click.echo(f"security.json written to {output} for the service account {service_user(settings)}")


@solr.command("stop")
@click.option("--port", type=int)
@_clear_errors
def solr_stop(port: int | None) -> None:
    """Stops every local Solr node, then ZooKeeper."""
    stopped = _cluster(port).stop()
    click.echo(f"Solr stopped ({', '.join(stopped)})" if stopped else "Solr was not running")


@solr.command("status")
@click.option("--port", type=int)
@_clear_errors
def solr_status(port: int | None) -> None:
    """Says whether each local node runs, and its version."""
    auth = credentials(_settings())
    local = _cluster(port)
    state = [node.status(auth) for node in local.nodes] + [zk.status() for zk in local.zookeepers]
    click.echo(json.dumps(state, indent=2))


@solr.command("fetch")
@_clear_errors
def solr_fetch() -> None:
    """Resolves the Solr jars with Maven (done by `start` when needed)."""
    click.echo("jars fetched" if ensure_jars() else "jars already up to date")


@main.group("config")
def config_group() -> None:
    """The configuration files generated from the settings' definitions."""


@config_group.command("write")
def config_write_cmd() -> None:
    """Writes conf/rag.properties and docs/configuration.md from datafari_rag/config/."""
    from .config_docs import write

    changed = write()
    click.echo("written: " + ", ".join(str(p) for p in changed) if changed else "both files are up to date")


@main.command("bootstrap")
@click.option("--shards", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--replicas", type=click.IntRange(1, 8), default=1, show_default=True)
@click.option(
    "--secure/--insecure",
    default=True,
    show_default=True,
    help="Secure (the default): make Solr authenticate (BasicAuth, the service account) and authorize "
    "(anyone may search /select and /vector, filtered; the rest is the service account's) if it does "
    "not, and refuse a Solr whose security.json has no 'all' permission. --insecure: accept a Solr "
    "without authentication, for development only.",
)
@_clear_errors
def bootstrap_cmd(shards: int, replicas: int, secure: bool) -> None:
    """Uploads configsets, creates FileShare and VectorMain, installs the embedding model."""
    settings = _settings()
    report = bootstrap(build_services(settings).solr, settings, shards, replicas, secure)
    for line in report.lines():
        click.echo(line)
    if "OPEN" in report.door:
        click.echo(INSECURE_WARNING.format(url=settings.solr_url), err=True)


@main.group("vector")
def vector_group() -> None:
    """FileShare's chunk-and-embed processor (Datafari's vector.* Solr user properties)."""


@vector_group.command("config")
@click.argument("assignments", nargs=-1, metavar="[KEY=VALUE]...")
@_clear_errors
def vector_config_cmd(assignments: tuple[str, ...]) -> None:
    """Shows the vector.* user properties of FileShare, or sets them (KEY=VALUE, validated, one
    Config API call; Solr reloads the collection and the next write uses them)."""
    from .solr import user_properties

    settings = _settings()
    solr = build_services(settings).solr
    pairs: dict[str, str] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.UsageError(f"{item!r} is not KEY=VALUE (e.g. vector.chunksize=200)")
        pairs[key.strip()] = value.strip()
    current = user_properties.get(solr, settings.collection_main)
    if pairs:
        try:
            values = user_properties.validated(pairs)
            user_properties.check_overlap({**current, **values})
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        user_properties.set_properties(solr, settings.collection_main, values)
        current = user_properties.get(solr, settings.collection_main)
    for key in (*user_properties.CHUNKING, *user_properties.WIRING):
        click.echo(f"{key}={current.get(key, '(configset default)')}")


@main.command("index-sample")
@_clear_errors
def index_sample_cmd() -> None:
    """Indexes the sample corpus that ships with the project."""
    from .indexing.sample import index_sample

    click.echo(f"indexed {index_sample(build_services(_settings()).indexer)} sample documents")


def _indexer() -> Indexer:
    return build_services(_settings()).indexer


@main.command("index")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--batch",
    type=click.IntRange(1, 1000),
    default=None,
    help="Documents per batch. Default: 32, 128 in processor mode.",
)
@click.option("--workflow", default=None, help="A workflow (id or name) whose chunker cuts the documents.")
@click.option(
    "--visibility",
    required=True,
    help="Who may read the documents (those without ACL fields of their own): public, group:<token> "
    "(the users holding that token) or user:<name> (that user only, as the web UI's private).",
)
@_clear_errors
def index_cmd(paths: tuple[Path, ...], batch: int | None, workflow: str | None, visibility: str) -> None:
    """Indexes local files (txt, md, html, pdf, docx, BEIR jsonl) into FileShare and VectorMain,
    with a progress bar (documents, chunks, failures) like an indexing job's events."""
    from .indexing.corpus import index_documents
    from .indexing.files import all_documents, count_documents, find_files
    from .indexing.visibility import readable_by

    protect = readable_by(_visibility_tokens(visibility))
    indexer = _indexer() if workflow is None else _workflow_indexer(workflow)
    files = find_files(list(paths))
    documents = map(protect, all_documents(files))
    report = index_documents(indexer, documents, total=count_documents(files), batch=batch)
    click.echo(f"{report.line()} from {len(files)} files")


def _visibility_tokens(visibility: str) -> list[str] | None:
    """The tokens ``--visibility`` gives documents (None: public)."""
    from .security.authority import own_token

    kind, _, name = visibility.partition(":")
    if visibility == "public":
        return None
    if kind in ("group", "user") and name.strip():
        return [name.strip()] if kind == "group" else [own_token(name.strip())]
    raise click.BadParameter("public, group:<token> or user:<name>", param_hint="--visibility")


def _workflow_indexer(name: str) -> Indexer:
    """An indexer cutting with the chunker of the workflow of this id or name."""
    services = build_services(_settings())
    found = [w for w in services.store.workflows().list() if name in (w.id, w.spec.name)]
    if not found:
        raise click.BadParameter(f"no workflow has the id or name {name!r}", param_hint="--workflow")
    return services.indexer_with(found[0].spec.settings(services.settings, indexing=True))


@main.command("sync")
@_clear_errors
def sync_cmd() -> None:
    """Chunks documents new or changed in FileShare (by any client, seen by _version_); drops vanished ones."""
    from .indexing.maintenance import sync

    for line in sync(_indexer()).lines():
        click.echo(line)


@main.command("reconcile")
@_clear_errors
def reconcile_cmd() -> None:
    """Compares FileShare with VectorMain and repairs what differs."""
    from .indexing.maintenance import reconcile

    for line in reconcile(_indexer()).lines():
        click.echo(line)


def _evaluation_settings(prefix: str, overrides: tuple[str, ...] = ()) -> Settings:
    """The settings with collections of the evaluation's own (never FileShare/VectorMain data),
    and the ``--set key=value`` overrides, each validated as the properties file's would be."""
    s = _settings()
    changes: dict[str, Any] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r}: expected key=value", param_hint="--set")
        try:
            value = convert(key.strip(), raw)  # an unknown key is a ConfigError too
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="--set") from None
        changes[KEYS[key.strip()].name] = value
    s = s.replace(**changes)
    return s.replace(collection_main=f"{prefix}{s.collection_main}", collection_vector=f"{prefix}{s.collection_vector}")


_SET = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Any rag.properties key for this run (repeatable), e.g. --set context.neighbours=1.",
)


@main.group("eval")
def eval_group() -> None:
    """Measure retrieval quality on a corpus of your own."""


@eval_group.command("retrieval")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--modes", default=",".join(RETRIEVAL_MODES.names), show_default=True)
@click.option("--prefix", default="eval_", show_default=True, help="Prefix of the evaluation's own collections.")
@click.option("--reindex", is_flag=True, help="Index the corpus again even if it is there.")
@click.option("--max-queries", type=click.IntRange(1), default=None, help="Only the first N test queries.")
@click.option("--fusion", type=click.Choice(["rrf", "normalized"]), default=None, help="rrf mode: hybrid.fusion.")
@click.option(
    "--weights",
    default=None,
    metavar="BM25,VECTOR",
    help="rrf mode: rrf.weight.bm25 and rrf.weight.vector, for questions of every language (the .fr ones too).",
)
@click.option(
    "--rerank",
    type=click.Choice(["api", "onnx", "llm"]),
    default=None,
    help="Rerank each mode's first rerank.topN results with this backend (rerank.* keys).",
)
@_SET
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None)
@_clear_errors
def eval_retrieval_cmd(
    folder: Path,
    modes: str,
    prefix: str,
    reindex: bool,
    max_queries: int | None,
    fusion: str | None,
    weights: str | None,
    rerank: str | None,
    overrides: tuple[str, ...],
    json_path: Path | None,
) -> None:
    """nDCG@10, Recall@100, MRR@10 per retrieval mode on a BEIR folder (corpus, queries, qrels/test.tsv)."""
    from .evaluation.retrieval import evaluate, index_corpus, load_beir, table
    from .rag.query_params import QueryParams

    settings = _evaluation_settings(prefix, overrides)
    if fusion:
        settings = settings.replace(hybrid_fusion=fusion)
    if weights:
        try:
            bm25_weight, vector_weight = (float(w) for w in weights.split(","))
        except ValueError:
            raise click.BadParameter("two numbers, e.g. 1,0.5", param_hint="--weights") from None
        settings = settings.replace(  # for questions of every language
            rrf_weight_bm25=bm25_weight,
            rrf_weight_vector=vector_weight,
            rrf_weight_bm25_fr=bm25_weight,
            rrf_weight_vector_fr=vector_weight,
        )
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in RETRIEVAL_MODES]
    if unknown:
        raise click.BadParameter(f"unknown mode(s): {', '.join(unknown)}", param_hint="--modes")
    beir = load_beir(folder)
    if max_queries:
        beir.queries = dict(list(beir.queries.items())[:max_queries])
    if rerank:
        settings = settings.replace(rerank_enabled=True, rerank_backend=rerank)
    services = build_services(settings)
    index_corpus(services, beir.corpus, reindex)
    reranker = services.pipeline.reranker
    if reranker is not None:
        click.echo(f"reranked: the first {reranker.top_n} results of each mode, by {settings.rerank_backend}")
    llm = None
    if QueryParams.of(settings).enhancing:
        llm = services.llm
        click.echo(f"query enhancement by {settings.llm_model} at {settings.llm_url}")
    results = evaluate(services.solr, settings, beir, chosen, reranker, llm)
    click.echo(table(results))
    if json_path:
        json_path.write_text(json.dumps({"folder": str(folder), "results": results}, indent=2))


@eval_group.command("answers")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--sample", "size", type=click.IntRange(1), default=300, show_default=True, help="Questions asked.")
@click.option("--all", "ask_all_questions", is_flag=True, help="Ask every question of qa.jsonl.")
@click.option("--seed", type=int, default=13, show_default=True, help="Seed of the random sample.")
@click.option("--method", type=click.Choice(RETRIEVAL_MODES.names), default=None, help="Default: retrieval.method.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--prefix", default="evalqa_", show_default=True, help="Prefix of the evaluation's own collections.")
@click.option("--reindex", is_flag=True, help="Index the corpus again even if it is there.")
@click.option("--lang", type=click.Choice(sorted(ABSTENTIONS)), default=None, help="The requests' lang (prompts).")
@click.option(
    "--withhold",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Share of the asked questions' gold paragraphs left out of the index: their questions are unanswerable.",
)
@_SET
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None)
@_clear_errors
def eval_answers_cmd(
    folder: Path,
    size: int,
    ask_all_questions: bool,
    seed: int,
    method: str | None,
    concurrency: int,
    prefix: str,
    reindex: bool,
    lang: str | None,
    withhold: float,
    overrides: tuple[str, ...],
    json_path: Path | None,
) -> None:
    """SQuAD-style exact match and F1, abstention accuracy, gold-paragraph hits and latency of ai/rag
    on a folder with corpus.jsonl and qa.jsonl (question, answers, is_impossible, gold_doc_id);
    the confidence's AUC and abstention for each rag.minConfidence."""
    from .app import create_app
    from .evaluation.answers import as_json, ask_all, load_qa, report, sample, table, withhold_gold
    from .evaluation.retrieval import index_corpus

    if withhold:  # another corpus: collections of its own
        prefix = f"{prefix}w{round(withhold * 100)}s{seed}_"
    settings = _evaluation_settings(prefix, overrides)
    if method:
        settings = settings.replace(retrieval_method=method)
    corpus, questions = load_qa(folder)
    chosen = sample(questions, None if ask_all_questions else size, seed)
    corpus, chosen = withhold_gold(corpus, chosen, withhold, seed)
    app = create_app(settings)
    index_corpus(app.extensions["datafari_rag"], corpus, reindex)
    result = report(list(ask_all(app, chosen, concurrency, lang)))
    if result.errors == result.questions:
        first = next(o for o in result.outcomes if o.status == "ERROR")
        raise click.ClickException(
            f"Every question failed ({first.label}); is the LLM at {settings.llm_url} running? "
            "(`datafari-rag agent` serves the local one.)"
        )
    click.echo(f"retrieval: {settings.retrieval}, LLM: {settings.llm_model} at {settings.llm_url}")
    click.echo(table(result))
    if result.curve and not settings.relevance_weighed:
        click.echo(
            "These answers' confidence does not weigh their relevance (rag.confidence.relevance="
            f"{settings.confidence_relevance}, weighed by default for the local generator's answers only): "
            "rag.minConfidence hides none of them, the curve is what a threshold on `confidence` would do."
        )
    if json_path:
        json_path.write_text(json.dumps({"folder": str(folder), "retrieval": settings.retrieval, **as_json(result)}))


def _gunicorn(app: str, config: str) -> list[str]:
    return [sys.executable, "-m", "gunicorn", "-c", str(CONF / config), app]


@main.group("feedback")
def feedback_group() -> None:
    """Users' ratings of answers (thumbs up or down in the web UI)."""


@feedback_group.command("export")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@_clear_errors
def feedback_export_cmd(folder: Path) -> None:
    """Writes the answers rated good as an evaluation set (qa.jsonl, corpus.jsonl) for `eval answers`."""
    from .evaluation.feedback_set import export_good_answers

    services = build_services(_settings())
    questions, documents = export_good_answers(services.store.feedback(), services.main, folder)
    click.echo(f"wrote {questions} question(s) rated good and {documents} cited document(s) to {folder}")


@main.group("users")
def users_group() -> None:
    """Local users (kept in the store, store.url), for sign-in without an identity provider."""


def _user_store() -> Any:
    from .store import StoreHandle, StoreUnavailable

    try:
        return StoreHandle(_settings()).users()
    except StoreUnavailable as exc:
        raise click.ClickException(str(exc)) from exc


def _user_call(call: Callable[..., Any], *args: Any) -> Any:
    from .store import StoreUnavailable
    from .store.users import UserError

    try:
        return call(*args)
    except (UserError, StoreUnavailable) as exc:
        raise click.ClickException(str(exc)) from exc


_PASSWORD = click.option(
    "--password-stdin", "from_stdin", is_flag=True, help="Read the password from standard input (one line)."
)


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    return str(click.prompt("Password", hide_input=True, confirmation_prompt=True))


@users_group.command("add")
@click.argument("username")
@click.option("--admin", is_flag=True, help="May manage users (…/users).")
@_PASSWORD
@_clear_errors
def users_add_cmd(username: str, admin: bool, from_stdin: bool) -> None:
    """Create a local user."""
    user = _user_call(_user_store().create, username, _password(from_stdin), admin)
    click.echo(f"created {user.username}{' (administrator)' if user.admin else ''}")


@users_group.command("passwd")
@click.argument("username")
@_PASSWORD
@_clear_errors
def users_passwd_cmd(username: str, from_stdin: bool) -> None:
    """Set a local user's password."""
    _user_call(_user_store().update, username, _password(from_stdin), None)
    click.echo(f"password of {username} changed")


@users_group.command("delete")
@click.argument("username")
@_clear_errors
def users_delete_cmd(username: str) -> None:
    """Delete a local user."""
    _user_call(_user_store().delete, username)
    click.echo(f"deleted {username}")


@users_group.command("list")
@_clear_errors
def users_list_cmd() -> None:
    """The local users (never their passwords)."""
    for user in _user_call(_user_store().list):
        click.echo(f"{user.username}\t{'admin' if user.admin else 'user'}\t{user.created_at}")


@main.group("alerts")
def alerts_group() -> None:
    """DatafariUI's alerts (kept in the store, store.url)."""


@alerts_group.command("run")
@_clear_errors
def alerts_run_cmd() -> None:
    """Run the alerts that are due now, once (for cron, with alerts.schedule.interval=0)."""
    from .alerts.runner import run_due
    from .services import build_services
    from .store import StoreUnavailable

    services = build_services(_settings())
    try:
        runs = run_due(services.store.alerts(), services.main, services.settings)
    except StoreUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    for run in runs:
        click.echo(f"{run.alert_id}\t{run.username}\t{len(run.documents)} new\t{'mailed' if run.mailed else ''}")
    click.echo(f"{len(runs)} alert(s) run")


@main.command("agent")
@click.option("--host", default=None, help="Default: agent.host.")
@click.option("--port", type=int, default=None, help="Default: agent.port.")
def agent_cmd(host: str | None, port: int | None) -> None:
    """Serves the local AI agent (OpenAI-compatible embeddings) with gunicorn (conf/gunicorn_agent.conf.py)."""
    _settings()  # a bad configuration is reported here, in one line
    if host:
        os.environ[env_name("agent.host")] = host
    if port:
        os.environ[env_name("agent.port")] = str(port)
    command = _gunicorn("datafari_rag.agent.app:create_agent_app()", "gunicorn_agent.conf.py")
    os.execv(command[0], command)


@main.command("serve")
@click.option(
    "--insecure",
    is_flag=True,
    help="Serve even on a Solr without authentication (development only).",
)
@_clear_errors
def serve_cmd(insecure: bool) -> None:
    """Serves the sidecar API with gunicorn (conf/gunicorn.conf.py), once Solr passes the start-up check."""
    settings = _settings()  # a bad configuration is reported here, in one line
    _door(settings, insecure)
    command = _gunicorn("datafari_rag.app:create_app()", "gunicorn.conf.py")
    os.execv(command[0], command)


def _door(settings: Settings, insecure: bool) -> None:
    """The start-up check on Solr (security_json.check_door); a Solr not answering yet is left to
    the health endpoint, which reports it."""
    try:
        said = check_door(build_services(settings).solr, allow_open=insecure)
    except SolrError as exc:
        if exc.status != 0:
            raise
        click.echo(f"Solr at {settings.solr_url} does not answer yet ({exc}); /health reports it", err=True)
        return
    click.echo(f"Solr's door: {said}")
    if "OPEN" in said:
        click.echo(INSECURE_WARNING.format(url=settings.solr_url), err=True)


START_PATIENCE = 900.0  # seconds: a service still starting after this has a problem of its own
PROGRESS_EVERY = 15.0


def _wait_http(
    url: str, process: Any, name: str, patience: float = START_PATIENCE, every: float = PROGRESS_EVERY
) -> None:
    """Waits for ``url`` to answer as long as ``process`` lives (a busy machine starts a service
    slowly, and a fixed wait gave up on ones that were coming), saying every ``every`` seconds that
    it still waits; fails at once if the process exits, or after ``patience`` seconds."""
    began = time.monotonic()
    said = began
    while time.monotonic() - began < patience:
        if process.poll() is not None:
            raise click.ClickException(f"The {name} exited with code {process.returncode}.")
        try:
            if urllib3.request("GET", url, timeout=2, retries=False).status < 500:
                return
        except urllib3.exceptions.HTTPError:
            pass
        if time.monotonic() - said >= every:
            said = time.monotonic()
            click.echo(f"  waiting for the {name} at {url} ({said - began:.0f}s; it is still starting)…")
        time.sleep(0.3)
    raise click.ClickException(f"The {name} did not answer at {url} within {patience:.0f}s, though it runs.")


def llm_warning(llm: dict[str, Any] | None) -> str | None:
    """What /health's report of an external LLM tells whoever just started the product: answers
    fail when it does not answer, or when it does not serve ``llm.model``."""
    if not llm:
        return None
    if llm.get("status") == "DOWN":
        return (
            f"The LLM at {llm['url']} does not answer ({llm['error']}): answers will fail until "
            "ai.api.endpoint and ai.api.token are right."
        )
    if llm.get("status") == "UP" and llm.get("modelListed") is False:
        return f"The LLM at {llm['url']} does not list the model {llm['model']!r}: set llm.model to one it serves."
    return None


def _check_ports_free(*ports: tuple[str, int, str]) -> None:
    """Refuses to start anything when a port ``run`` serves on is taken: its own servers would exit
    at once while whatever holds the port answered its readiness checks."""
    for host, port, key in ports:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise click.ClickException(
                    f"Port {port} on {host} ({key}) is taken ({exc.strerror}): another datafari-rag run, "
                    f"agent or serve may be running. Stop it, or set {env_name(key)} to another port."
                ) from None


def _server(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A server ``run`` starts, in a process group of its own (its master and workers), so that
    stopping it reaches every process of it; ``run`` forwards Ctrl-C itself."""
    return subprocess.Popen(command, env=env, start_new_session=True)


def _signal_group(child: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)


def _first_run(settings: Settings, env: dict[str, str]) -> tuple[Settings, list[str], Any]:
    """Local sign-in without editing a file: the signing secret (configured, else kept in
    var/secrets) passed to the sidecar; on a store with no user, a first administrator and the demo
    users, whose generated passwords are the lines returned (shown once, never stored in clear)."""
    from .first_run import DEMO_USERS, create_demo_users, first_administrator, signing_secret

    secret = signing_secret(settings)
    if not secret:  # an identity provider signs the tokens: no local sign-in to set up
        return settings, [], None
    env[env_name("security.jwt.hs256.secret")] = secret
    users = _user_store()
    lines = []
    admin = first_administrator(users)
    if admin is not None:
        lines.append(f"  administrator: {admin[0]} / {admin[1]}   (shown once: change it on the Users page)")
    demo = create_demo_users(users)
    if demo is not None:
        lines.append(f"  demo users: {', '.join(DEMO_USERS)} / {demo}   (their tokens: {settings.mapping_file})")
    return settings.replace(jwt_hs256_secret=secret), lines, users


def sign_in_lines(first: list[str]) -> list[str]:
    """The passwords made now, or, on a later start, where the ones shown once are replaced."""
    return first or [
        "  sign in with the passwords shown at the first start; a forgotten one: ./datafari-rag users passwd NAME"
    ]


def _banner(base: str, settings: Settings, first: list[str], users: Any) -> None:
    """Where the web UI is, who may sign in, and the point of the product: one question asked as
    two demo users, answered from the documents each may read."""
    from .first_run import ASKED_AS, QUESTION, ask_as

    if not settings.jwt_hs256_secret:
        click.echo(f"\nWeb UI: {base}/ui/ (signed in by {settings.jwt_issuer or 'your identity provider'})")
        return
    click.echo(f"\nWeb UI: {base}/ui/")
    for line in sign_in_lines(first):
        click.echo(line)
    if all(users.get(name) is not None for name in ASKED_AS):
        click.echo(f"\nThe same question, asked as two users: {QUESTION!r}")
        for name in ASKED_AS:
            answer = ask_as(base, settings, users, name)
            sources = "; ".join(answer.sources[:3]) or "none"
            click.echo(f"  as {answer.username}: {answer.message[:240]}\n    sources: {sources}")


@main.command("run")
@click.option("--insecure", is_flag=True, help="Start Solr without authentication (development only).")
@_clear_errors
def run_cmd(insecure: bool) -> None:
    """Starts Solr (secured), the agent and the sidecar, bootstraps, indexes the sample; Ctrl-C stops all."""
    settings = _settings()
    _check_ports_free(
        (settings.agent_host, settings.agent_port, "agent.port"),
        (settings.server_host, settings.server_port, "server.port"),
    )
    local = _cluster(None, None, _security_json(settings, not insecure, None))
    node = local.nodes[0]
    started_solr = node.pid() is None
    children: list[subprocess.Popen[bytes]] = []

    def stop_all(*_: Any) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        for child in reversed(children):
            _signal_group(child, signal.SIGTERM)
        for child in children:  # the sidecar lets its answers under way end (server.gracefulTimeout)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=settings.graceful_seconds + 5)
            _signal_group(child, signal.SIGKILL)  # workers left behind (one still booting) go too
        if started_solr:
            local.stop()

    # Ctrl-C must work even when started from a shell that made this process ignore SIGINT
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        began = time.monotonic()
        local.start()
        click.echo(f"Solr ready at {local.urls} in {time.monotonic() - began:.1f}s")
        env = {**os.environ, env_name("solr.url"): local.urls}
        children.append(_server(_gunicorn("datafari_rag.agent.app:create_agent_app()", "gunicorn_agent.conf.py"), env))
        _wait_http(f"{settings.agent_url}/models", children[-1], "agent")
        click.echo(f"Agent ready at {settings.agent_url}")
        services = build_services(settings.replace(solr_url=local.urls))
        for line in bootstrap(services.solr, services.settings, secure=not insecure).lines():
            click.echo(line)
        if insecure:
            click.echo(INSECURE_WARNING.format(url=node.url), err=True)
        from .indexing.sample import RESTRICTED_CORPUS, index_sample

        shown = index_sample(services.indexer), index_sample(services.indexer, RESTRICTED_CORPUS)
        click.echo(f"Indexed {shown[0]} sample documents and {shown[1]} restricted ones (HR, staff, finance)")
        settings, first, users = _first_run(settings, env)
        if first:  # at once: a start that fails after this point must not lose them
            click.echo("\nMade now, shown once:")
            for line in first:
                click.echo(line)
        children.append(_server(_gunicorn("datafari_rag.app:create_app()", "gunicorn.conf.py"), env))
        base = f"http://{settings.server_host}:{settings.server_port}"
        _wait_http(f"{base}/health", children[-1], "sidecar")
        health = urllib3.request("GET", f"{base}/health", timeout=30, retries=False).json()
        click.echo(f"Sidecar health: {health['status']}")
        if warning := llm_warning(health.get("llm")):
            click.echo(warning, err=True)
        click.echo("\nTry:")
        click.echo(f"  curl {base}/health")
        click.echo(
            f"  curl -s {base}{settings.api_prefix}/ai/rag -H 'Content-Type: application/json' "
            '-d \'{"query": "How many days of paid leave do I get?"}\''
        )
        click.echo(
            f"  curl -s {base}{settings.api_prefix}/ai/rag -H 'Content-Type: application/json' "
            '-d \'{"query": "Combien de jours de télétravail ?", "lang": "fr"}\''
        )
        click.echo(f"  curl -s '{base}{settings.api_prefix}/search/select?q=password&action=rag&format=stepbystep'")
        click.echo(f"  curl -s '{base}{settings.api_prefix}/search/vector?queryrag=working+from+home&topK=3'")
        click.echo(
            f"  curl '{node.url}/{settings.collection_vector}/vector?queryrag=working+from+home&fl=id,title,score'"
        )
        click.echo(f"  curl '{node.url}/{settings.collection_main}/select?q=password&fl=id,title,score'")
        click.echo(f"  curl {settings.agent_url}/models")
        _banner(base, settings, first, users)
        click.echo("\nCtrl-C stops everything that was started.")
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while all(child.poll() is None for child in children):
            time.sleep(1)
        raise click.ClickException("A service stopped unexpectedly; stopping the others.")
    except KeyboardInterrupt:
        click.echo("\nStopping…")
    finally:
        stop_all()


if __name__ == "__main__":
    main()
