"""Registry of the public release files the project evaluates on.

Every entry pins one file of an authors' public GitHub release to a commit and
(where known) a SHA-256 sum, and says where the file lives in the local mirror
folder (the same relative layout as ``$NFEVAL_MIRROR``, e.g.
``linkage/ANTIQUE.json``) and in the download cache.

Two kinds of entries are special:

* ``debateqa/dispute_awareness_fewshot`` is not a file of the release: it is the
  ``prompt_template`` string inside ``scripts/eval_DA.py``. The download fetches
  that ``.py`` at the pinned commit, takes the string out with :mod:`ast`
  (the script is never executed) and verifies the SHA-256 of the extracted
  UTF-8 text (``extract``).
* ``debateqa/test`` and ``debateqa/dev`` have no SHA-256 sum known here
  (``sha256=None``): the split files were never available to the people who
  built this registry. Their download is still pinned to the release commit,
  and verified as far as the commit allows:

  - if the raw file at the commit is a Git LFS pointer, the pointer (which the
    commit pins) names the content's SHA-256 and size: the real content is then
    fetched from GitHub's LFS media endpoint and verified against that sum;
  - otherwise only the format is checked (JSON lines with ``id``, ``question``
    and ``partial_answers``; the expected number of questions), the computed
    sum is printed so a user can pin it (see :func:`nfeval.data.fetch.resolve`),
    and it is recorded next to the cached copy (``<file>.sha256``) so that a
    later change of the cached file is detected.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from nfeval.errors import NfevalError

LINKAGE_REPO = "babyyang525/LINKAGE-Listwise-NFQA-Evaluation"
LINKAGE_COMMIT = "097fdc5f0d0a589570f3737c098e063a0eeae5bf"
DEBATEQA_REPO = "pillowsofwind/DebateQA"
DEBATEQA_COMMIT = "a3615fd76be9cc7acb049da8519fb9ad0c037eb4"

#: Where raw files are fetched from: ``{base}/{repo}/{commit}/{path}``.
RAW_BASE_URL = "https://raw.githubusercontent.com"
#: Where Git LFS content is fetched from: ``{base}/{repo}/{commit}/{path}``.
LFS_BASE_URL = "https://media.githubusercontent.com/media"
#: Environment variable overriding :data:`RAW_BASE_URL` (tests, private mirrors).
BASE_URL_ENV = "NFEVAL_BASE_URL"
#: Environment variable overriding :data:`LFS_BASE_URL`.
LFS_BASE_URL_ENV = "NFEVAL_LFS_BASE_URL"


@dataclass(frozen=True)
class ReleaseFile:
    """One pinned file of a public release.

    ``path`` is the path inside the repository; ``relpath`` the path inside the
    mirror folder and the cache (``cache_dir()/data/<relpath>``). ``sha256`` is
    the sum of the file as stored in the mirror (for ``extract`` entries: of
    the extracted text), or ``None`` where it is not known. ``format`` names the
    layout the loaders expect (see :mod:`nfeval.data.loaders`). ``extract``
    names a string assignment to take out of a Python source file instead of
    keeping the file (``"python-string:<variable>"``). ``expected_records`` is
    the number of JSON lines / top-level entries the release file holds, used as
    a format check where no sum is known.
    """

    name: str
    repo: str
    commit: str
    path: str
    relpath: str
    sha256: str | None
    format: str
    description: str
    extract: str | None = None
    expected_records: int | None = None

    @property
    def url(self) -> str:
        """Raw GitHub URL of the file at the pinned commit (ignores overrides)."""
        return self.url_for(RAW_BASE_URL)

    def url_for(self, base_url: str | None = None) -> str:
        """URL under ``base_url`` (default: ``$NFEVAL_BASE_URL`` or raw GitHub)."""
        base = base_url or os.environ.get(BASE_URL_ENV) or RAW_BASE_URL
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{self.path}"

    def lfs_url_for(self, base_url: str | None = None) -> str:
        """Git LFS media URL of the file at the pinned commit."""
        base = base_url or os.environ.get(LFS_BASE_URL_ENV) or LFS_BASE_URL
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{self.path}"

    @property
    def source(self) -> str:
        """Human-readable origin: ``repo@commit:path``."""
        return f"{self.repo}@{self.commit}:{self.path}"


def _linkage(name: str, path: str, relpath: str, sha: str, fmt: str, desc: str,
             n: int | None = None) -> ReleaseFile:
    return ReleaseFile(name, LINKAGE_REPO, LINKAGE_COMMIT, path, relpath, sha, fmt, desc,
                       expected_records=n)


def _debateqa(name: str, path: str, relpath: str, sha: str | None, fmt: str, desc: str,
              extract: str | None = None, n: int | None = None) -> ReleaseFile:
    return ReleaseFile(name, DEBATEQA_REPO, DEBATEQA_COMMIT, path, relpath, sha, fmt, desc,
                       extract=extract, expected_records=n)


_ENTRIES = [
    _linkage("antique", "dataset/ANTIQUE.json", "linkage/ANTIQUE.json",
             "09b89e5a7af390e994ed7f1a0acc94d539428f4f47e1142e901f5ecd46090339",
             "linkage-graded-json",
             "500 ANTIQUE non-factoid questions with ~20 human-graded community answers "
             "each (labels 1..4, 4 best)", 500),
    _linkage("trec-dl-nf", "dataset/TREC-DL-NF.json", "linkage/TREC-DL-NF.json",
             "e80ccaec6ada9be72f6ce9aecb8544ee93fbbe4f3804c687d8a4c555c7a6acea",
             "linkage-graded-json",
             "55 non-factoid TREC-DL 2019/2020 questions with ~100 NIST-graded MS MARCO "
             "passages each (labels 0..3, 3 best)", 55),
    _linkage("webglm", "dataset/WEBGLM_50.json", "linkage/WEBGLM_50.json",
             "92e2674495fadef320bfc79aeb3ceed4d26125a5fb0a16207b5216f6cf0e950d",
             "webglm-json",
             "100 WebGLM questions with three graded LLM answers (3/2/1) and generated "
             "references ground0..ground3 (ground3 best)", 100),
    _linkage("linkage/LINKAGE", "prompt/LINKAGE.txt", "prompts/linkage/LINKAGE.txt",
             "579ec3918966aafd8e634cfba70b500895d6b3bffb699e7048cc1a357b0559ea",
             "prompt-text", "LINKAGE 0-shot listwise prompt (#question, #ground, #candidate)"),
    _linkage("linkage/no_ref_point_score", "prompt/no_ref_point_score.txt",
             "prompts/linkage/no_ref_point_score.txt",
             "f762f8a931a054d442917778f2f39368d4533886b60505b89229645b6d0be81e",
             "prompt-text", "pointwise scoring prompt without references"),
    _linkage("linkage/with_ref_point_score", "prompt/with_ref_point_score.txt",
             "prompts/linkage/with_ref_point_score.txt",
             "2a813a4c22d7ca3c473da60cf2199096fc95c2ccdbcf24c33d6e595f1607e5c2",
             "prompt-text", "pointwise scoring prompt with graded references"),
    _linkage("linkage/pairwise_comparison", "prompt/pairwise_comparison.txt",
             "prompts/linkage/pairwise_comparison.txt",
             "72748e46e3f9e63d73586798c5b8723b929ea732e3ceb6c4db42f3d482f677d9",
             "prompt-text", "pairwise comparison prompt (#answer_a, #answer_b; [[A]]/[[B]]/[[C]])"),
    _linkage("linkage/create_multi_step_answer", "prompt/create_multi_step_answer.txt",
             "prompts/linkage/create_multi_step_answer.txt",
             "0a161da6e0b56cd816d23c7a389b9bf328c91d6eb3e28769b930cb61ebe8e645",
             "prompt-text", "prompt generating three degraded answers from a golden one"),
    _debateqa("debateqa/test", "dataset/test.jsonl", "debateqa/test.jsonl", None,
              "debateqa-jsonl",
              "DebateQA test split: 1,000 debatable questions with partial answers "
              "(sha256 unknown here: see the module docstring)", n=1000),
    _debateqa("debateqa/dev", "dataset/dev.jsonl", "debateqa/dev.jsonl", None,
              "debateqa-jsonl",
              "DebateQA dev split: 1,941 debatable questions with partial answers "
              "(sha256 unknown here: see the module docstring)", n=1941),
    _debateqa("debateqa/answers_demo", "scripts/input_file_demo.jsonl",
              "debateqa/answers_demo.jsonl",
              "62e75a7f66e8320b395b05cee036c16340f39d76bebeda981feff4e95a9a6cc5",
              "answers-jsonl",
              "the DebateQA authors' 1,000 demo answers to the test questions "
              "({generation, id} per line)", n=1000),
    _debateqa("debateqa/dispute_awareness_fewshot", "scripts/eval_DA.py",
              "prompts/debateqa/dispute_awareness_fewshot.txt",
              "8c5d60ca52e97245003194a2d658cf55da8793d654f40c070a5942ba104ebec3",
              "prompt-text",
              "D.A. few-shot prompt ({question}, {answer}): the prompt_template string of "
              "scripts/eval_DA.py", extract="python-string:prompt_template"),
]

#: All known release files by name.
REGISTRY: dict[str, ReleaseFile] = {e.name: e for e in _ENTRIES}


def get(name: str | ReleaseFile) -> ReleaseFile:
    """The registry entry called ``name`` (a :class:`ReleaseFile` passes through)."""
    if isinstance(name, ReleaseFile):
        return name
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise NfevalError(f"unknown release file {name!r}; known names: {known}") from None


def names() -> list[str]:
    """Names of all registry entries, in registry order."""
    return list(REGISTRY)
