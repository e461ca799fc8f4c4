"""The `attnlens` command line (README, "Command line"): bad input exits 2 with one line, no
traceback."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

import attnlens
from attnlens.app.cli_decode import add_decode_parser, cmd_decode
from attnlens.app.experiment_command import add_experiment_parser, cmd_experiment
from attnlens.app.output import binary_out, text_out
from attnlens.app.plot_command import add_plot_parser, cmd_plot
from attnlens.app.trace_inputs import add_trace_inputs, trace_of
from attnlens.model.lenses.budget import check_settings
from attnlens.model.net.checkpoint import DESCRIPTION
from attnlens.model.training.config import TrainConfig
from attnlens.model.training.evaluate import SUITES
from attnlens.record.export import write_chunks, write_json


class UsageError(Exception):
    """A bad flag or value on the command line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + message
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="attnlens", description="See what every attention head of a Transformer looks at."
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    models = sub.add_parser("models", help="list the models that load by name")
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")

    trace = sub.add_parser("trace", help="record every layer's and head's attention for TEXT")
    trace.add_argument("model", metavar="MODEL")
    trace.add_argument("text", metavar="TEXT")
    trace.add_argument("--target", help="teacher-force this target (encoder-decoder models)")
    add_trace_inputs(trace)
    trace.add_argument("--format", choices=("json", "csv", "npz"), default="json")
    trace.add_argument("--out", type=Path, help="write here instead of standard output")
    trace.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")

    train = sub.add_parser("train", help="train a bundled model's recipe from scratch")
    train.add_argument("task", metavar="RECIPE", nargs="?", help="a recipe name (see --list)")
    train.add_argument("--list", action="store_true", help="print the recipe names and stop")
    train.add_argument("--out", type=Path, help="folder for the weights (default: runs/TASK)")
    train.add_argument("--steps", type=int, help="training steps (default: the recipe's)")
    train.add_argument("--seed", type=int, help="random seed (default: the recipe's)")
    train.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")
    train.add_argument(
        "--resume",
        type=Path,
        metavar="FOLDER",
        help="a two-stage recipe (sort): take the first stage from FOLDER, train the second",
    )

    evaluate = sub.add_parser(
        "eval", help="exact match and head alignment of a task model; perplexity of lm"
    )
    evaluate.add_argument("model", metavar="MODEL")
    evaluate.add_argument(
        "--suite",
        choices=SUITES,
        default="held-out",
        help="held-out: fresh examples like training's; hard: repeats, edge lengths, mixed case "
        "and the longest input, each kind on its own line (default: held-out)",
    )
    evaluate.add_argument(
        "--n", type=int, default=1000, help="examples (per kind for --suite hard; default: 1000)"
    )
    evaluate.add_argument("--seed", type=int, help="seed of the examples (default: 20000)")
    evaluate.add_argument("--json", action="store_true", help="print JSON instead of a table")
    evaluate.add_argument(
        "--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)"
    )

    add_decode_parser(sub)

    add_plot_parser(sub)

    add_experiment_parser(sub)

    serve = sub.add_parser("serve", help="start the app in the browser")
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument("--model", help="model to open first (default: reverse)")
    serve.add_argument(
        "--class-store",
        metavar="URL",
        help="where live classes are kept: sqlite:///PATH (default: a file in "
        "~/.local/share/attnlens) or redis://HOST:PORT/DB for several replicas "
        "(or set ATTNLENS_CLASS_STORE)",
    )
    serve.add_argument(
        "--decks",
        metavar="DIR",
        action="append",
        type=Path,
        help="a folder of lecture decks (*.deck) besides the bundled ones; may be repeated",
    )
    return parser


def cmd_models(args: argparse.Namespace) -> None:
    entries = attnlens.bundled_models()
    if args.json:
        print(json.dumps([e.__dict__ for e in entries], indent=2))
        return
    for e in entries:
        print(f"{e.name:<12} {e.architecture:<16} {e.description}")


def cmd_trace(args: argparse.Namespace) -> None:
    lens = attnlens.load(args.model, device=args.device)
    tr = trace_of(lens, args)
    for warning in tr.warnings:
        print(f"attnlens: warning: {warning}", file=sys.stderr)
    write_trace(tr, args.format, args.out)


def write_trace(tr: attnlens.Trace, fmt: str, out: Path | None) -> None:
    """The record as JSON, CSV or NPZ, written piece by piece: memory for one piece at a time,
    whatever the record's size (the CSV of a 510-token MiniLM trace is about 900 MB)."""
    if fmt == "npz":
        with binary_out(out) as handle:
            tr.write_npz(handle)
    elif fmt == "csv":
        with text_out(out) as handle:
            write_chunks(tr.csv_chunks(), handle)
    else:
        with text_out(out) as handle:
            write_json(tr.json_tree(), handle)


def cmd_train(args: argparse.Namespace) -> None:
    from attnlens.model.training.loop import train
    from attnlens.model.training.recipes import RECIPES, get_recipe

    if args.list:
        print("\n".join(RECIPES))
        return
    if args.task is None:
        raise UsageError("attnlens train: give a recipe name (attnlens train --list)")
    recipe = get_recipe(args.task)
    out = args.out or Path("runs") / args.task
    config = _with_overrides(recipe.train, args)
    then = recipe.then() if recipe.then is not None and config.then_steps else None
    first = _first_stage(args.resume, config)
    objective, model = recipe.objective(), recipe.model
    metrics = train(objective, model, config, out, args.device, then=then, first=first)
    shown = {k: v for k, v in metrics.items() if k != "head_alignment"}
    print(json.dumps({"out": str(out), **shown}))


def _first_stage(resume: Path | None, config: TrainConfig) -> Path | None:
    """--resume: the folder of a two-stage recipe's first stage (checked before training)."""
    if resume is None:
        return None
    if not config.then_steps:
        raise attnlens.InputError("--resume continues a recipe's second stage; this one has none")
    if not (resume / DESCRIPTION).is_file():
        raise attnlens.InputError(f"--resume {resume}: no trained model there")
    return resume


def _with_overrides(config: TrainConfig, args: argparse.Namespace) -> TrainConfig:
    """The recipe's training settings with --steps and --seed applied."""
    if args.steps is not None:
        if args.steps < 1:
            raise attnlens.InputError(f"--steps must be at least 1, got {args.steps}")
        config = replace(config, steps=args.steps)
    if args.seed is not None:
        config = replace(config, seed=args.seed)
    return config


def cmd_eval(args: argparse.Namespace) -> None:
    from attnlens.app.eval_command import DEFAULT_SEED, report_text

    seed = DEFAULT_SEED if args.seed is None else args.seed
    report = attnlens.load(args.model, device=args.device).evaluate(args.n, seed, args.suite)
    print(report_text(report, args.json))


# Streamlit's options for `attnlens serve` (the bench serves its bare reference page with the
# same). After every rerun Streamlit would stat the file of every loaded module (torch's
# thousands) and force a full garbage collection, which walked the ~260k objects of torch and
# the models: with a class following a teacher that was most of the server's CPU
# (bench/class_capacity.py), and 110-170 ms of every Explore keystroke (bench/breakdown.py).
STREAMLIT_OPTIONS = (
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
    "--server.fileWatcherType",
    "none",
    "--runner.postScriptGC",
    "false",
    "--client.toolbarMode",  # a class sees Settings (the theme), not Deploy or Clear cache
    "viewer",
)

# Allocator settings `attnlens serve` gives the server unless the environment sets them
# already, so that memory a closed tab freed goes back to the system (README, "Deploying for a
# class"). glibc raises its mmap threshold to each large block freed (up to 32 MiB: a trace's
# attention at 510 tokens is 12 MB a layer) and then keeps up to twice that free at the top of
# every thread's arena, where malloc_trim does not reach: after 4 sessions that downloaded, the
# arenas of its threads kept 20-24 MB each. A fixed threshold keeps glibc trimming the top
# above 128 KiB; a trace is no slower. pyarrow (Streamlit's tables) allocates from its own
# mimalloc, which kept 34 MB of pages of finished script threads; the system allocator is
# trimmed like the rest.
SERVER_ENVIRONMENT = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),  # the dynamic threshold's own ceiling
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}


def server_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: env, with SERVER_ENVIRONMENT's settings where env has none."""
    return {**SERVER_ENVIRONMENT, **env}


def cmd_serve(args: argparse.Namespace) -> None:
    if not 1 <= args.port <= 65535:
        raise attnlens.InputError(f"--port must be between 1 and 65535, got {args.port}")
    _prepare_teaching(args)
    script = Path(__file__).parent / "main.py"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.port",
        str(args.port),
        *STREAMLIT_OPTIONS,
    ]
    if args.model:
        command += ["--", "--model", args.model]
    # streamlit takes over this process (stopping it stops all) and glibc reads its settings
    os.execve(sys.executable, command, server_environment(os.environ))


def _prepare_teaching(args: argparse.Namespace) -> None:
    """Check the class store answers and read the decks before the app starts: a store that
    cannot be reached stops here with its reason; a bad deck is named, and the rest serve."""
    from attnlens.app.classroom.store import ENV, open_store, store_url
    from attnlens.app.lecture.deck import DECKS_ENV, read_library

    for folder in args.decks or ():
        if not folder.is_dir():
            raise attnlens.InputError(f"--decks {folder}: no such folder")
    if args.class_store:
        os.environ[ENV] = args.class_store
    store = open_store(store_url())
    try:
        store.ping()
    finally:
        store.close()
    if args.decks:
        os.environ[DECKS_ENV] = os.pathsep.join(str(f.resolve()) for f in args.decks)
    library = read_library()
    for message in library.errors.values():
        print(f"attnlens: warning: {' '.join(message.split())}", file=sys.stderr)


COMMANDS = {
    "models": cmd_models,
    "trace": cmd_trace,
    "decode": cmd_decode,
    "train": cmd_train,
    "eval": cmd_eval,
    "plot": cmd_plot,
    "experiment": cmd_experiment,
    "serve": cmd_serve,
}


def _interrupted(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt  # SIGTERM ends a command like Ctrl-C: a half-written --out goes


def main(argv: Sequence[str] | None = None) -> int:
    if threading.current_thread() is not threading.main_thread():
        return _run(argv)  # only the main thread may set a signal handler
    previous = signal.signal(signal.SIGTERM, _interrupted)
    try:
        return _run(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        check_settings()  # a bad limit in the environment stops every command at once
        COMMANDS[args.command](args)
    except UsageError as err:
        print(_one_line(err), file=sys.stderr)
        return 2
    except (ValueError, OSError) as err:
        print(f"attnlens: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attnlens: interrupted", file=sys.stderr)
        return 130
    return 0


def _one_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return " ".join(text.split())


if __name__ == "__main__":
    raise SystemExit(main())
