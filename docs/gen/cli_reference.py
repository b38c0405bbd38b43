"""The command-line reference, one page per command, written at build time from the command
definitions themselves (typer's click objects): each command's usage line, its help, and every
argument and option with its type, default and help, as ``ragmeter COMMAND --help`` prints them.
A command or option added to the code appears here by itself; one removed disappears.

Run by mkdocs-gen-files (``mkdocs.yml``); ``pages()`` is what the docs test reads.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.errors import MarkupError
from rich.text import Text

PROG = "ragmeter"
FOLDER = "reference/cli"


def plain(text: str | None) -> str:
    """Help text as the terminal shows it: rich markup read (``ragmeter\\[ray]`` is ``ragmeter[ray]``)."""
    if not text:
        return ""
    try:
        return Text.from_markup(text).plain
    except MarkupError:
        return text


def commands(group: Any = None, prefix: str = "") -> dict[str, Any]:
    """Every command by its full name (``testset generate``), the sub-commands of groups included."""
    if group is None:
        from ragmeter.cli.main import app

        group = typer.main.get_command(app)
    out: dict[str, Any] = {}
    for name, command in group.commands.items():
        out[prefix + name] = command
        if hasattr(command, "commands"):  # a group: its sub-commands too
            out.update(commands(command, f"{prefix}{name} "))
    return out


def slug(name: str) -> str:
    return name.replace(" ", "-")


def html_safe(text: str) -> str:
    """Text where Markdown would read ``<model>`` as an HTML tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return html_safe(" ".join(text.split())).replace("|", "\\|")


def _is_flag(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False))


def _default(param: Any) -> str:
    default = param.default
    if callable(default) or default is None or default == () or (_is_flag(param) and default is False):
        return ""
    if isinstance(default, (list, tuple)):
        default = ", ".join(map(str, default))
    return f"`{default}`"


def _type(param: Any) -> str:
    if _is_flag(param):
        return "flag"
    choices = getattr(param.type, "choices", None)
    if choices:
        return " \\| ".join(f"`{c}`" for c in choices)
    return param.type.name.lower()


def first_line(command: Any) -> str:
    return plain(command.short_help or command.help or "").strip().split("\n")[0]


def page(name: str, command: Any) -> str:
    """The Markdown page of one command."""
    ctx = command.context_class(command, info_name=f"{PROG} {name}")
    usage = " ".join([f"{PROG} {name}", *command.collect_usage_pieces(ctx)])
    lines = [f"# `{PROG} {name}`", "", html_safe(plain(command.help).strip()), "", "```text", usage, "```", ""]
    if hasattr(command, "commands"):
        lines += ["| command | what it does |", "|---|---|"]
        for sub, c in command.commands.items():
            lines.append(f"| [`{PROG} {name} {sub}`]({slug(f'{name} {sub}')}.md) | {_cell(first_line(c))} |")
        lines.append("")
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option" and p.name != "help"]
    if arguments:
        lines += ["## Arguments", "", "| argument | required | help |", "|---|---|---|"]
        for p in arguments:
            metavar = p.human_readable_name.upper() if not getattr(p, "metavar", None) else p.metavar
            required = "yes" if p.required else "no"
            lines.append(f"| `{metavar}` | {required} | {_cell(plain(getattr(p, 'help', '') or ''))} |")
        lines.append("")
    if options:
        lines += ["## Options", "", "| option | type | default | help |", "|---|---|---|---|"]
        for p in options:
            names = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
            help_text = plain(p.help) + (" (repeatable)" if p.multiple else "")
            lines.append(f"| {names} | {_type(p)} | {_default(p)} | {_cell(help_text)} |")
        lines.append("")
    lines += [f"`{PROG} {name} --help` prints the same in the terminal.", ""]
    return "\n".join(lines)


def index(found: dict[str, Any]) -> str:
    from ragmeter.cli.main import app

    root = typer.main.get_command(app)
    lines = [f"# The `{PROG}` command", "", html_safe(plain(root.help).strip()), "",
             "Written from the command definitions when this site is built: every command and option "
             f"the installed `{PROG}` has, with its default. `{PROG} --version` prints the version.", "",
             "| command | what it does |", "|---|---|"]
    for name, command in found.items():
        lines.append(f"| [`{PROG} {name}`]({slug(name)}.md) | {_cell(first_line(command))} |")
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """path under docs/ -> Markdown, for the index, every command's page and the navigation."""
    found = commands()
    out = {f"{FOLDER}/index.md": index(found)}
    out.update({f"{FOLDER}/{slug(n)}.md": page(n, c) for n, c in found.items()})
    out[f"{FOLDER}/SUMMARY.md"] = "\n".join(
        ["- [Commands](index.md)"] + [f"- [{PROG} {n}]({slug(n)}.md)" for n in found]) + "\n"
    return out


def main() -> None:
    import mkdocs_gen_files

    for path, text in pages().items():
        with mkdocs_gen_files.open(path, "w") as f:
            f.write(text)


if __name__ in ("__main__", "<run_path>"):
    main()
