"""`mindgraph init`: scaffold mindgraph.yml, raw/ and wiki/ in a folder."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..config import CONFIG_FILENAME, DEFAULT_CONFIG_YAML, load_settings
from ..errors import ConfigError
from .common import ConfigClickError, echo, emit_json, json_option


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--force", is_flag=True, help="Overwrite an existing mindgraph.yml.")
@json_option
def init_command(directory: Path, force: bool, as_json: bool) -> None:
    """Create mindgraph.yml, raw/ and wiki/ in DIRECTORY (default: the current folder, or
    the -C DIR given before the command)."""
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
    _make_folder(directory, directory)
    config = directory / CONFIG_FILENAME
    created = []
    if config.exists() and not force:
        note = f"{config} already exists; kept it (use --force to overwrite)."
    else:
        try:
            config.write_text(DEFAULT_CONFIG_YAML, encoding="utf-8")
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
    echo(f"Put your notes in {settings.raw_dir}, then run: mindgraph ingest -C {directory}")


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
