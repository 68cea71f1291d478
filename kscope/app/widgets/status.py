"""The status line: file, target, device, torch, and what kscope is doing right now."""

from __future__ import annotations

import os

from rich.text import Text
from textual.widgets import Static


class StatusLine(Static):
    DEFAULT_CSS = "StatusLine { height: 1; background: $panel; }"

    def show(
        self,
        *,
        file: str,
        target: str,
        device: str,
        torch_version: str,
        state: str,
        timeout: float,
        stale: bool,
        breaks: int = 0,
        grad: str = "",
        mode: str = "",
    ) -> None:
        """grad: "fwd+bwd" (backward runs too), "no_grad", or "" for the target as written;
        mode: torch.compile's mode and options when not the defaults ("max-autotune · freezing=True")."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" kscope ", style="bold reverse")
        # What kscope is doing comes first: at 80 columns the end of the line is cut.
        text.append(f" {state}", style="bold yellow" if "…" in state else "bold")
        if stale:
            text.append(" STALE", style="bold reverse red")
        if grad:
            text.append(f" {grad}", style="bold reverse magenta")
        if mode:
            text.append(f" {mode}", style="bold reverse blue")
        if breaks:
            text.append(f" ⚠ {breaks} graph break{'s' if breaks > 1 else ''}", style="bold yellow")
        text.append(f"  {os.path.basename(file)}", style="bold")
        if target:
            text.append(f":{target}", style="bold cyan")
        if device:
            text.append(f"  {device}", style="green")
        if torch_version:
            text.append(f"  torch {torch_version}", style="dim")
        text.append(f"  timeout {timeout:g}s", style="dim")
        self.update(text, layout=False)  # always one row: no need to lay the screen out again
