"""Writing results: long-form tables with signatures, paper values, figures.

Every artefact writes ``results/<id>.csv`` (long form: identifier columns,
then ``ours``, its 95% interval ``ci_low``/``ci_high`` and the number of
resampled units ``n_<unit>`` (``n_questions``, ``n_answers``...), then
``paper`` where the paper gives the figure, then bookkeeping columns) and
``results/<id>.json`` (the same rows, the signatures of every metric that
produced them, the notebook parameters and the commit of the sources; no absolute
path), both at a stated precision (:data:`TABLE_DIGITS`, :data:`FRAME_DIGITS`) so that
every machine that reruns them writes the same bytes. What one run was (machine, wall
time, items read and computed) goes to ``results/executed/<id>.run.json``, not committed. A table whose numbers are not estimates (counts,
a closed form) says so in ``interval`` instead of carrying an interval.
Figures go to ``figures/<id>.png``.

A signature (after sacrebleu's) is the string that lets a number be
regenerated exactly: metric, variant, model with its source and checksum,
dtype, prompt checksum, seed, n, package version and git commit.

Paper values are never typed into notebooks: they are transcribed once from
the paper text into ``data/paper_values/<id>.csv`` and joined here.
"""

from __future__ import annotations

import io
import json
import math
import sys
import time
from decimal import ROUND_HALF_UP, Decimal
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.version import __version__
from nfeval_repro.paths import FIGURES, PAPER_VALUES, RESULTS, ROOT
from nfeval.signature import Signature
from nfeval.signature import git_commit as _git_commit

#: What decides the reproduction's numbers: a change here (uncommitted) makes the commit
#: ``-dirty``. Results, figures and the item store are outputs, so writing them does not.
SOURCE_PATHS = ("src", "notebooks", "prompts", "data", "Makefile", "pyproject.toml",
                "requirements.txt", "requirements-models.txt", "requirements-embed.txt")


def git_commit(root: Path = ROOT) -> str:
    """The last commit that changed a reproduction source (:data:`SOURCE_PATHS`), with
    ``-dirty`` when one differs from it; 'unknown' outside git.

    Not ``HEAD``: a commit that changes only results, docs or tests changes no number, and a
    rerun at it must write the same bytes as the run it repeats (``make reproduce`` leaves a
    clean tree). Two checkouts whose sources are equal name the same commit."""
    return _git_commit(root, SOURCE_PATHS)


#: The stated precision of every committed CSV, in significant digits. A table
#: (``results/<id>.csv``: estimates, intervals, paper values) carries 6, three more than a
#: paper prints; a companion data file (``results/<id>/<name>.csv``: per-item scores that
#: other artefacts read back and rank) carries 12 (its ``score`` column in full: :data:`EXACT_COLUMNS`), so no two values a model produced tie by
#: rounding while the last bits that the CPU's kernels move (float64 sums in another order:
#: about 1e-16 of the value) never reach the file. Verdicts and readings are decided on the
#: unrounded values in memory, before writing. A recomputed number agrees with a committed
#: one to within half a unit of the last digit written (:func:`tolerance`).
TABLE_DIGITS = 6
FRAME_DIGITS = 12
#: The columns of a companion data file written in full (Python's shortest spelling that
#: reads back to the same float, :func:`format_exact`): ``score``, the per-item value the
#: tables' rank statistics were computed from and that ``nfeval meta`` reads back. Two
#: scores a lexical metric computes as the same fraction by two roads can differ in their
#: last bit; the table ranked them apart, and 12 digits would make them a tie (lk_t02's
#: ROUGE-1 Kendall read back from 12 digits: 0.234738 against the table's 0.234697). These
#: values come from the item store or from code with no CPU kernel in it, and the kernel
#: check (:mod:`nfeval_repro.kernel_check`) holds their bytes under every setting.
EXACT_COLUMNS = ("score",)
FLOAT_FORMAT = f"%.{TABLE_DIGITS}g"


def format_float(value: float, digits: int) -> str:
    """``value`` with ``digits`` significant digits as the CSVs write it: ``%g`` (no trailing
    zeros), a zero of either sign as ``0``, NaN as the empty field."""
    if value != value:  # NaN
        return ""
    text = f"%.{digits}g" % value
    return "0" if text in ("-0", "0") else text


def format_exact(value: float) -> str:
    """``value`` in full: the shortest text that reads back to the same float (``repr``),
    a zero of either sign as ``0``, NaN as the empty field."""
    if value != value:  # NaN
        return ""
    return "0" if value == 0 else repr(float(value))


def tolerance(value: float, digits: int = TABLE_DIGITS) -> float:
    """Half a unit in the last of ``digits`` significant digits of ``value``: how far the
    unrounded number can lie from what a CSV of that precision holds (0 for 0)."""
    if not value or value != value or math.isinf(value):
        return 0.0
    exponent = math.floor(math.log10(abs(value)))
    return 0.5 * 10.0 ** (exponent - digits + 1)


def _object_float(value: float, digits: int) -> str:
    text = format_float(value, digits)
    return text if text == "" else str(float(text))


def csv_text(frame: pd.DataFrame, digits: int, exact: Sequence[str] = ()) -> str:
    """The one way a committed CSV is written: no index, ``\n`` line ends, every float with
    ``digits`` significant digits (:func:`format_float`), whatever column holds it (a float
    inside a column of mixed types too, spelt as Python spells the rounded value), except
    the float columns named in ``exact``, written in full (:func:`format_exact`); integers
    and text as they are."""
    out = frame.copy()
    for col in out.columns:
        series = out[col]
        if col in exact and pd.api.types.is_float_dtype(series):
            out[col] = [format_exact(v) for v in series.to_numpy(dtype=float)]
        elif pd.api.types.is_float_dtype(series):
            out[col] = [format_float(v, digits) for v in series.to_numpy(dtype=float)]
        elif series.dtype == object:  # mixed: often a label (0.2, 1.0, "0.2 - 1.0"), so a
            # float keeps Python's own spelling of its rounded value (1.0, not 1)
            out[col] = [_object_float(v, digits) if isinstance(v, float) else v
                        for v in series]
    return out.to_csv(index=False, lineterminator="\n")


def write_csv(path: str | Path, frame: pd.DataFrame, digits: int,
              exact: Sequence[str] = ()) -> Path:
    """Write ``frame`` to ``path`` at the stated precision (:func:`csv_text`), atomically."""
    path = Path(path)
    _atomic_write(path, csv_text(frame, digits, exact))
    return path


def paper_values(artefact_id: str, directory: Path = PAPER_VALUES) -> pd.DataFrame:
    """The paper's figures for an artefact, as transcribed in ``data/paper_values/<id>.csv``."""
    path = Path(directory) / f"{artefact_id}.csv"
    if not path.exists():
        raise NfevalError(f"no paper values for {artefact_id!r}: expected {path}")
    return pd.read_csv(path, comment="#")


def join_paper(ours: pd.DataFrame, paper: pd.DataFrame, on: Sequence[str]) -> pd.DataFrame:
    """Left-join the paper's ``paper`` column onto our table by identifier columns.

    Every paper row must find its match in ours: a paper figure with nothing
    of ours beside it is a bug in the notebook (or in the transcription).
    """
    paper = paper.copy()
    for col in on:  # a transcribed whole number (-2) keys a float column of ours (-2.0, -2.5)
        if (pd.api.types.is_numeric_dtype(paper[col]) and pd.api.types.is_float_dtype(ours[col])
                and not pd.api.types.is_float_dtype(paper[col])):
            paper[col] = paper[col].astype(ours[col].dtype)
    keys = paper[list(on)].merge(ours[list(on)], on=list(on), how="left", indicator=True)
    orphans = keys[keys["_merge"] == "left_only"]
    if len(orphans):
        raise NfevalError(
            "paper values without a row of ours: " + orphans[list(on)].to_string(index=False)
        )
    return ours.merge(paper[list(on) + ["paper"]], on=list(on), how="left")


def round_half_up(value: float, decimals: int) -> float:
    """Round as papers print numbers (6.45 -> 6.5), not to even as ``round`` does.

    Uses the shortest decimal representation of ``value`` (``repr``), so
    a mean of exactly 3225 / 500 = 6.45 rounds up.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    quantum = Decimal(1).scaleb(-decimals)
    return float(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP))


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return _clean(value.item())
    return value


def _rounded(value: Any, digits: int) -> Any:
    """A JSON row's value at the CSV's stated precision (NaN as null)."""
    value = _clean(value)
    if isinstance(value, float) and not math.isinf(value):
        return float(format_float(value, digits))
    return value


def run_record_path(artefact_id: str, output_dir: str | Path | None = None) -> Path:
    """``results/executed/<id>.run.json``: what one run of an artefact was (its machine, wall
    time, the items it read from the store and computed), beside the executed notebooks and
    not committed: it differs between runs that write the same table."""
    return results_dir(output_dir) / "executed" / f"{artefact_id}.run.json"


INTERVAL_COLUMNS = ("ci_low", "ci_high")


def _relative(value: Any) -> Any:
    """A path-like parameter as the repository sees it: '' for the root, else relative."""
    if not isinstance(value, str) or not value.startswith("/"):
        return value
    try:
        rel = Path(value).resolve().relative_to(ROOT)
        return "" if str(rel) == "." else str(rel)
    except ValueError:
        return "<outside the repository>"


def write_table(
    artefact_id: str,
    table: pd.DataFrame,
    *,
    id_columns: Sequence[str],
    interval: str,
    signatures: Sequence[Signature] = (),
    parameters: Mapping[str, Any] | None = None,
    output_dir: str | Path | None = None,
    started: float | None = None,
    notes: str = "",
) -> tuple[Path, Path]:
    """Write ``results/<id>.csv`` and ``results/<id>.json``; return both paths.

    ``interval`` names the unit the 95% intervals resample (``"questions"``,
    ``"answers"``...): the table must then have ``ci_low``, ``ci_high`` and
    ``n_<unit>``. For a table of exact figures (counts, a closed form) it is
    ``"none: <why>"`` instead.

    Columns are ordered: ``id_columns``, ``ours``, ``ci_low``, ``ci_high``,
    ``n_<unit>``, ``paper`` (if present), then the rest in their given order.
    Rows keep their given order. Neither file holds a timestamp or the machine (those go
    to :func:`run_record_path`), so the same inputs give byte-identical files. Absolute paths among ``parameters``
    are written relative to the repository.

    Called from a notebook, the JSON records the notebook's parameters itself
    (:func:`notebook_parameters`: every annotated name of its parameters cell,
    with the value it has now, papermill's injections included);
    ``parameters`` adds what the notebook resolved from them (the judge a
    profile picked, a size that ``-1`` stood for) and wins where a name is in
    both.
    """
    if "ours" not in table.columns:
        raise NfevalError(f"{artefact_id}: a results table needs an 'ours' column")
    missing = [c for c in id_columns if c not in table.columns]
    if missing:
        raise NfevalError(f"{artefact_id}: identifier columns {missing} not in the table")
    if interval.startswith("none"):
        if not interval.startswith("none: ") or len(interval) < 10:
            raise NfevalError(f"{artefact_id}: interval='none: <why>' must say why the table "
                              "has no intervals")
        head = list(id_columns) + ["ours"]
    else:
        unit_col = f"n_{interval}"
        lacking = [c for c in (*INTERVAL_COLUMNS, unit_col) if c not in table.columns]
        if lacking:
            raise NfevalError(f"{artefact_id}: interval over {interval!r} needs the columns "
                              f"{lacking}")
        head = list(id_columns) + ["ours", *INTERVAL_COLUMNS, unit_col]
    head += ["paper"] if "paper" in table.columns else []
    rest = [c for c in table.columns if c not in head]
    table = table[head + rest].reset_index(drop=True)

    results = results_dir(output_dir)
    csv_path = results / f"{artefact_id}.csv"
    json_path = results / f"{artefact_id}.json"
    write_csv(csv_path, table, TABLE_DIGITS)

    from nfeval.machine import machine_record
    from nfeval_repro.store import active_store

    commit = git_commit()
    record = {
        "id": artefact_id,
        "columns": list(table.columns),
        "id_columns": list(id_columns),
        "interval": interval,
        "rows": [{k: _rounded(v, TABLE_DIGITS) for k, v in row.items()}
                 for row in table.to_dict("records")],
        # each signature names the reproduction's commit (the library's own names its sources)
        "signatures": [replace(s, commit=commit).as_dict() for s in signatures],
        "parameters": {k: _relative(v) for k, v in
                       {**notebook_parameters(depth=2), **dict(parameters or {})}.items()},
        "nfeval_version": __version__,
        "commit": commit,
        "notes": notes,
    }
    _atomic_write(json_path, json.dumps(record, indent=2, sort_keys=False, default=str) + "\n")
    # what this run was (machine, time, store traffic) differs between runs of the same
    # sources: it goes beside the executed notebooks, not into the committed record
    store = active_store()
    run = {"id": artefact_id, "commit": record["commit"], **machine_record(),
           "store": ({"items_read": store.hits, "items_computed": store.misses}
                     if store is not None else None),
           "wall_time_s": round(time.time() - started, 2) if started else None}
    path = run_record_path(artefact_id, output_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, json.dumps(run, indent=2, default=str) + "\n")
    return csv_path, json_path


#: Notebook parameters that say where outputs go, not what they are: never recorded.
LOCATION_PARAMETERS = frozenset({"output_dir"})


def notebook_parameters(depth: int = 1) -> dict[str, Any]:
    """The parameters of the notebook that called (``depth`` frames up), with their values now.

    A notebook's parameters cell declares each parameter with an annotation
    (``limit: int = 6  # ...``); IPython keeps those in the namespace's
    ``__annotations__``, and papermill's injected cell rebinds the values. Outside
    an IPython namespace (a script, a module, a test) this is empty, as is any
    name in :data:`LOCATION_PARAMETERS`.
    """
    frame = sys._getframe(depth)
    namespace = frame.f_globals
    if "get_ipython" not in namespace or "__annotations__" not in namespace:
        return {}
    return {name: namespace[name] for name in namespace["__annotations__"]
            if name in namespace and name not in LOCATION_PARAMETERS}


def results_dir(output_dir: str | Path | None = None) -> Path:
    """``<output_dir>/results`` (the repository's ``results/`` by default), created."""
    out = Path(output_dir) if output_dir else ROOT
    results = out / RESULTS.relative_to(ROOT)
    results.mkdir(parents=True, exist_ok=True)
    return results


def write_frame(artefact_id: str, name: str, frame: pd.DataFrame,
                output_dir: str | Path | None = None, digits: int = FRAME_DIGITS) -> Path:
    """A companion data file ``results/<id>/<name>.csv`` (e.g. per-answer scores), at
    ``digits`` (a frame of summary numbers that nothing recomputes from: the tables'
    :data:`TABLE_DIGITS`).

    It lives in the artefact's own folder, apart from the ``results/<id>.csv``
    tables (identifiers, ``ours``, ``paper``), because it is data, not a table."""
    folder = results_dir(output_dir) / artefact_id
    folder.mkdir(exist_ok=True)
    # 12 digits, not 6: every rank-based row recomputes from it (6 digits make false ties);
    # its scores in full, so a rank statistic read back is the table's (EXACT_COLUMNS)
    return write_csv(folder / f"{name}.csv", frame, digits, EXACT_COLUMNS)


#: Resolution of the saved PNGs (the notebook shows them at the inline backend's 100 dpi).
FIGURE_DPI = 150


def save_figure(fig, artefact_id: str, output_dir: str | Path | None = None) -> Path:
    """Save ``figures/<id>.png`` (and ``.pdf``) without timestamps in the metadata; its
    layout is checked first (:mod:`nfeval_repro.figure_layout`: overlapping text, too tall)."""
    from nfeval_repro.figure_layout import check

    check(fig, artefact_id)
    out = Path(output_dir) if output_dir else ROOT
    figures = out / FIGURES.relative_to(ROOT)
    figures.mkdir(parents=True, exist_ok=True)
    png = figures / f"{artefact_id}.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight",
                metadata={"Software": None})
    png.write_bytes(buf.getvalue())
    fig.savefig(figures / f"{artefact_id}.pdf", bbox_inches="tight",
                metadata={"Creator": None, "Producer": None, "CreationDate": None})
    _show_saved(fig, buf.getvalue())
    return png


def _show_saved(fig, png: bytes) -> None:
    """In a notebook, show the saved PNG and close ``fig`` (the figure object stays usable),
    so the inline backend does not draw it a second time at the end of the cell."""
    shell = sys.modules.get("IPython")
    shell = shell.get_ipython() if shell is not None else None
    if shell is None or not hasattr(shell, "kernel"):
        return
    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    pixels = int.from_bytes(png[16:20], "big")  # the PNG header's width
    display(Image(data=png, format="png", width=round(pixels * 100 / FIGURE_DPI)))
    plt.close(fig)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


@dataclass
class Experiment:
    """What an artefact's experiment function returns: its table with what
    :func:`write_table` records beside it, and its companion frames.

    Each artefact has one experiment function (``nfeval.<paper>.experiments.<id>.run``)
    that takes the notebook's parameters and returns this; the notebook writes it
    (:meth:`write`), plots it and reads it.
    """

    id: str
    table: pd.DataFrame
    id_columns: Sequence[str]
    interval: str
    signatures: Sequence[Signature] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    notes: str = ""
    #: companion data files, ``results/<id>/<name>.csv``
    frames: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    #: anything else the notebook plots or reads (not written)
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: frames of summary numbers written at the tables' precision (:data:`TABLE_DIGITS`),
    #: not the per-item data's :data:`FRAME_DIGITS`
    summary_frames: Sequence[str] = ()

    def write(self, output_dir: str | Path | None = None,
              started: float | None = None) -> tuple[Path, Path]:
        """Write the table (with the calling notebook's parameters) and every frame."""
        parameters = {**notebook_parameters(depth=2), **dict(self.parameters)}
        paths = write_table(self.id, self.table, id_columns=self.id_columns,
                            interval=self.interval, signatures=self.signatures,
                            parameters=parameters, output_dir=output_dir, started=started,
                            notes=self.notes)
        for name, frame in self.frames.items():
            write_frame(self.id, name, frame, output_dir,
                        TABLE_DIGITS if name in self.summary_frames else FRAME_DIGITS)
        return paths
