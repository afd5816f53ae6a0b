"""`mindgraph init`: scaffold mindgraph.yml, raw/ and wiki/ in a folder.

A newcomer's first move is often `mindgraph init ~/vault` on the folder that already holds
their notes: that made raw/ (empty) and wiki/ inside it, so the notes were never compiled
("raw/ has no notes yet") and, in an Obsidian vault, every compiled page would show up in the
vault beside its note. `--raw FOLDER` keeps such a folder where it is (paths.raw names it and
the workspace is elsewhere); an Obsidian vault given as DIRECTORY is refused before anything
is written, and so is a folder holding notes outside raw/ (they would not be compiled), unless
``--ignore-notes`` says they are not meant to be (a project's README and docs).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import click
import yaml

from ..config import (CONFIG_FILENAME, DEFAULT_CONFIG_YAML, Settings, load_settings,
                      settings_from_dict)
from ..errors import ConfigError
from .common import ConfigClickError, echo, emit_json, json_option


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--force", is_flag=True, help="Overwrite an existing mindgraph.yml.")
@click.option("--raw", "raw_folders", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Compile the notes of this existing folder (an Obsidian vault, a notes "
                   "folder) where they are, instead of DIRECTORY/raw: mindgraph.yml names it "
                   "as paths.raw, and nothing in it is ever written.")
@click.option("--ignore-notes", is_flag=True,
              help="Make the workspace in DIRECTORY even though it holds notes outside raw/ "
                   "(a project's README and docs); they are not compiled.")
@json_option
def init_command(directory: Path, force: bool, raw_folders: tuple[Path, ...],
                 ignore_notes: bool, as_json: bool) -> None:
    """Create mindgraph.yml, raw/ and wiki/ in DIRECTORY (default: the current folder, or
    the -C DIR given before the command). For notes you already keep elsewhere, give their
    folder with --raw and a new DIRECTORY beside it: `mindgraph init ~/vault-wiki --raw
    ~/vault`."""
    if len(raw_folders) > 1:
        # click kept the last one silently: the first vault would never be compiled
        given = ", ".join(str(folder) for folder in raw_folders)
        raise ConfigClickError(f"--raw is given {len(raw_folders)} times ({given}): a "
                               f"workspace compiles one folder of notes. Make one workspace "
                               f"per folder (`mindgraph init {raw_folders[0]}-wiki --raw "
                               f"{raw_folders[0]}`, and so on), or give the folder that holds "
                               f"them all.")
    raw_folder = raw_folders[0] if raw_folders else None
    if str(directory).startswith("~"):
        # a quoted '~' reached us unexpanded: `-C ~` in the next command would be the home
        # folder, not the folder made here
        raise ConfigClickError(f"{str(directory)!r} is not a folder to create: the shell did "
                               f"not expand '~' (it was quoted); write the path out, e.g. "
                               f"$HOME/notes.")
    before = (click.get_current_context().find_root().obj or {}).get("base_dir")
    if before is not None:
        directory = before / directory
    _refuse_system_folder(directory)
    config = directory / CONFIG_FILENAME
    fresh = force or not config.exists()
    text = DEFAULT_CONFIG_YAML if raw_folder is None else _with_raw(directory, raw_folder)
    if fresh and raw_folder is None:
        _refuse_a_vault(directory)
        if not ignore_notes and directory.is_dir():     # before anything is written
            _refuse_notes_outside(directory, settings_from_dict(
                yaml.safe_load(text), base_dir=directory, source=str(config)))
    if fresh and raw_folder is not None:
        try:        # a --raw that cannot work (the workspace inside it) writes nothing
            settings_from_dict(yaml.safe_load(text), base_dir=directory, source=str(config))
        except ConfigError as exc:
            raise ConfigClickError(f"{exc} (from --raw {raw_folder}: give DIRECTORY a new "
                                   f"folder beside it, e.g. {_beside(raw_folder)})") from exc
    _make_folder(directory, directory)
    created = []
    if not fresh:
        note = f"{config} already exists; kept it (use --force to overwrite)."
    else:
        try:
            config.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ConfigClickError(f"cannot write {config} ({exc.strerror or exc}); check the "
                                   f"folder's permissions or pick another.") from exc
        created.append(str(config))
        note = f"Wrote {config}."
    try:
        settings = load_settings(directory)
    except ConfigError as exc:
        raise ConfigClickError(str(exc)) from exc
    for folder in (settings.raw_dir, settings.wiki_dir):
        if not folder.exists():
            _make_folder(folder, directory)
            created.append(str(folder))
    if as_json:
        emit_json({"config": str(config), "created": created,
                   "raw": str(settings.raw_dir), "wiki": str(settings.wiki_dir)})
        return
    echo(note)
    if raw_folder is not None:
        echo(f"Your notes stay in {settings.raw_dir} (never written); run: mindgraph ingest "
             f"-C {directory}")
    else:
        echo(f"Put your notes in {settings.raw_dir}, then run: mindgraph ingest -C {directory}")


_NOTE_SUFFIXES = (".md", ".markdown", ".txt")
_NOTES_SEEN = 1000          # enough to say "holds notes"; a huge folder is not walked whole


def _with_raw(directory: Path, raw_folder: Path) -> str:
    """The default mindgraph.yml with ``paths.raw`` naming ``raw_folder`` (relative to
    ``directory`` when it can be, as a workspace moved with its vault keeps working)."""
    target = Path(os.path.abspath(raw_folder))
    try:
        shown = os.path.relpath(target, os.path.abspath(directory))
    except ValueError:      # another drive (Windows)
        shown = str(target)
    value = yaml.safe_dump(shown, allow_unicode=True).splitlines()[0]   # quoted if need be
    return _aligned(DEFAULT_CONFIG_YAML.replace("  raw: raw ", f"  raw: {value} ", 1))


# a set key, its value (quoted, or plain: no " #" in it) and the comment after it:
# "  wiki: wiki        # compiled pages"
_COMMENTED = re.compile(r"""^(  \w+: (?:'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|(?:[^ \n]| (?!#))*?))"""
                        r" +(# [^\n]*)$", re.M)
# the defaults' comment column: one for every set key
_COLUMN = next(m.start(2) - m.start(0) for m in _COMMENTED.finditer(DEFAULT_CONFIG_YAML))


def _aligned(text: str) -> str:
    """``text`` with the comments of its set keys in the defaults' column, or one past the
    longest key and value when that is longer (a long raw path): one column still."""
    found = list(_COMMENTED.finditer(text))
    column = max([_COLUMN, *(len(match.group(1)) + 1 for match in found)])
    return _COMMENTED.sub(lambda match: match.group(1).ljust(column) + match.group(2), text)


def _beside(folder: Path) -> str:
    """A new folder next to ``folder``, for a workspace of its notes."""
    absolute = Path(os.path.abspath(folder))
    return str(absolute.parent / f"{absolute.name}-wiki")


def _refuse_a_vault(directory: Path) -> None:
    """An Obsidian vault (a .obsidian folder) as DIRECTORY: its compiled pages would land in
    wiki/ inside the vault, each shown by Obsidian beside its own note."""
    if (directory / ".obsidian").is_dir():
        raise ConfigClickError(
            f"{directory} is an Obsidian vault (it has .obsidian/): a workspace there would "
            f"put wiki/, a compiled copy of every note, inside the vault. Keep the vault as it "
            f"is and make the workspace beside it: mindgraph init {_beside(directory)} --raw "
            f"{directory}")


def _refuse_notes_outside(directory: Path, settings: Settings) -> None:
    """A usage error, before anything is written, when ``directory`` holds notes outside
    raw/: mindgraph would compile none of them (the newcomer's `init ~/notes`)."""
    outside = _notes_outside(directory, settings)
    if not outside:
        return
    count = f"{len(outside)}{'+' if len(outside) >= _NOTES_SEEN else ''}"
    shown = ", ".join(outside[:3]) + (", …" if len(outside) > 3 else "")
    raise ConfigClickError(
        f"{directory} already holds {count} note{'s' if len(outside) > 1 else ''} outside raw/ "
        f"({shown}): mindgraph compiles only {settings.raw_dir}, so none of them would be; "
        f"nothing was written. Keep them where they are and make the workspace beside them: "
        f"mindgraph init {_beside(directory)} --raw {directory}; or move them into "
        f"{settings.raw_dir} first; or, if they are not meant to be compiled (a project's "
        f"README and docs), add --ignore-notes.")


def _notes_outside(directory: Path, settings: Settings) -> list[str]:
    """Notes under ``directory`` that are not in raw/ (nor wiki/, the state folder, hidden
    folders, node_modules or another workspace: a folder holding its own mindgraph.yml, whose
    notes and compiled pages are its own), as paths relative to it; at most ``_NOTES_SEEN``."""
    skip = {p.resolve() for p in (settings.raw_dir, settings.wiki_dir, settings.state_dir)}
    found: list[str] = []
    for folder, subfolders, files in os.walk(directory):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".")
                               and d != "node_modules"
                               and (Path(folder) / d).resolve() not in skip
                               and not (Path(folder) / d / CONFIG_FILENAME).is_file())
        for name in sorted(files):
            if name.lower().endswith(_NOTE_SUFFIXES) and not name.startswith("."):
                found.append((Path(folder) / name).relative_to(directory).as_posix())
                if len(found) >= _NOTES_SEEN:
                    return found
    return found


# the filesystem's root and the folders an operating system keeps its own files in: a
# workspace there would put raw/, wiki/ and mindgraph.yml among them (and, as root, succeed)
# (/bin, /sbin and /lib are links to /usr's on merged-/usr systems, most Linux today: each is
# checked as written and resolved, and /usr's own folders are listed). The scratch folders
# shared by every user (/tmp, /var/tmp, /dev/shm) are refused themselves; a project folder
# inside one (/var/tmp/notes) is anyone's own and accepted, as is any folder under the others.
SYSTEM_FOLDERS = frozenset({
    "/", "/bin", "/boot", "/dev", "/dev/shm", "/etc", "/home", "/lib", "/lib32", "/lib64",
    "/opt", "/proc", "/run", "/sbin", "/srv", "/sys", "/tmp",
    "/usr", "/usr/bin", "/usr/include", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
    "/usr/sbin", "/usr/share", "/usr/src",
    "/usr/local", "/usr/local/bin", "/usr/local/etc", "/usr/local/include", "/usr/local/lib",
    "/usr/local/libexec", "/usr/local/sbin", "/usr/local/share", "/usr/local/src",
    "/var", "/var/cache", "/var/lib", "/var/lock", "/var/log", "/var/mail", "/var/opt",
    "/var/run", "/var/spool", "/var/tmp"})
SCRATCH_FOLDERS = frozenset({"/tmp", "/var/tmp", "/dev/shm"})


# where home folders live: each one directly under these is a user's home (/root is root's)
HOME_PARENTS = ("/home", "/Users")


def _is_home(folder: Path) -> bool:
    """True for the user's home ($HOME), root's (/root) or any user's (/home/NAME, /Users/NAME)."""
    homes = {Path("/root")}
    for home in (os.environ.get("HOME"), os.path.expanduser("~")):
        if home and os.path.isabs(home):
            homes |= {Path(os.path.normpath(home)), Path(home).resolve()}
    return folder in homes or folder.parent.as_posix() in HOME_PARENTS


def _refuse_system_folder(directory: Path) -> None:
    """A usage error for the filesystem's root, a system folder or a home folder (as written
    or resolved)."""
    written = Path(os.path.normpath(os.path.abspath(directory)))
    for folder in (written, directory.resolve()):
        if _is_home(folder):
            raise ConfigClickError(f"{folder} is a home folder; mindgraph would write raw/, "
                                   f"wiki/ and mindgraph.yml among its files. Give `mindgraph "
                                   f"init` a subfolder, e.g. {folder}/notes (asked for "
                                   f"{directory}).")
        if folder != Path(folder.anchor) and folder.as_posix() not in SYSTEM_FOLDERS:
            continue
        if folder.as_posix() in SCRATCH_FOLDERS:
            raise ConfigClickError(f"{folder} is a scratch folder every user shares; mindgraph "
                                   f"would write raw/, wiki/ and mindgraph.yml into it. Give "
                                   f"`mindgraph init` a folder of your own, e.g. "
                                   f"{folder}/notes or ~/notes (asked for {directory}).")
        raise ConfigClickError(f"{folder} is a system folder; mindgraph would write raw/, "
                               f"wiki/ and mindgraph.yml into it. Give `mindgraph init` a "
                               f"folder of your own, e.g. ~/notes (asked for {directory}).")


def _make_folder(folder: Path, directory: Path) -> None:
    """Create ``folder`` (and its parents); a usage error naming it and the problem when it
    cannot be (a file in the way, a folder that cannot be written, a read-only filesystem)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()),
                       None)
        if isinstance(exc, (FileExistsError, NotADirectoryError)) and blocker is not None:
            why = f"{blocker} is a file, not a folder"
        else:
            why = exc.strerror or str(exc)
        raise ConfigClickError(f"cannot create the folder {folder} ({why}). Give `mindgraph "
                               f"init` a folder that can be created, e.g. a new one under "
                               f"your home folder (asked for {directory}).") from exc


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(init_command)
