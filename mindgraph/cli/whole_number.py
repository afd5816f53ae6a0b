"""The type of the CLI's count options (-n, --limit, --port …): click's IntRange, saying
"'abc' is not a whole number" where click says "'abc' is not a valid integer range"."""

from __future__ import annotations

from typing import Any

import click


class WholeNumber(click.IntRange):
    """An integer option within bounds; a value that is no integer at all says so plainly."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                int(value.strip())
            except ValueError:
                self.fail(f"{value!r} is not a whole number.", param, ctx)
        return super().convert(value, param, ctx)
