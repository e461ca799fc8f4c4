"""The `attnlens` command line (docs/cli.md): bad input exits 2 with one line, no
traceback."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from attnlens.app.cli.decode import add_decode_parser, cmd_decode
from attnlens.app.cli.evaluate import add_eval_parser, cmd_eval
from attnlens.app.cli.experiment import add_experiment_parser, cmd_experiment
from attnlens.app.cli.models import add_models_parser, cmd_models
from attnlens.app.cli.plot import add_plot_parser, cmd_plot
from attnlens.app.cli.serve import add_serve_parser, cmd_serve
from attnlens.app.cli.trace import add_trace_parser, cmd_trace
from attnlens.app.cli.train import add_train_parser, cmd_train
from attnlens.app.cli.usage import Parser, UsageError
from attnlens.model.budget import check_settings


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="attnlens", description="See what every attention head of a Transformer looks at."
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    add_models_parser(sub)
    add_trace_parser(sub)
    add_train_parser(sub)
    add_eval_parser(sub)
    add_decode_parser(sub)

    add_plot_parser(sub)

    add_experiment_parser(sub)

    add_serve_parser(sub)
    return parser


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
