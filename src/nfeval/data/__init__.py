"""Find, verify and load the public release files (LINKAGE, DebateQA).

See :mod:`nfeval.data.registry` for the pinned files, :mod:`nfeval.data.fetch`
for how a file is found (explicit path > ``$NFEVAL_MIRROR`` > cache >
download) and :mod:`nfeval.data.loaders` for the typed loaders.
"""

from .fetch import (
    OFFLINE_ENV,
    ChecksumWarning,
    FileStatus,
    cache_path,
    clear_hash_cache,
    extract_python_string,
    mirror_path,
    offline,
    resolve,
    sha256_file,
    status,
    verify_all,
)
from .loaders import (
    AnswerProblem,
    AnswerSet,
    DebateItem,
    GradedAnswer,
    GradedQuestion,
    PartialAnswer,
    load_answers,
    load_debateqa,
    load_linkage,
    load_prompt,
    load_webglm,
)
from .registry import (
    BASE_URL_ENV,
    DEBATEQA_COMMIT,
    DEBATEQA_REPO,
    LFS_BASE_URL_ENV,
    LINKAGE_COMMIT,
    LINKAGE_REPO,
    REGISTRY,
    ReleaseFile,
    get,
    names,
)

__all__ = [
    "AnswerProblem", "AnswerSet", "BASE_URL_ENV", "ChecksumWarning", "DEBATEQA_COMMIT",
    "DEBATEQA_REPO", "DebateItem", "FileStatus", "GradedAnswer", "GradedQuestion",
    "LFS_BASE_URL_ENV", "LINKAGE_COMMIT", "LINKAGE_REPO", "OFFLINE_ENV", "PartialAnswer",
    "REGISTRY", "ReleaseFile", "cache_path", "clear_hash_cache", "extract_python_string",
    "get", "load_answers", "load_debateqa", "load_linkage", "load_prompt", "load_webglm",
    "mirror_path", "names", "offline", "resolve", "sha256_file", "status", "verify_all",
]
