"""File operations inside a tree an agent touched: never follow a link, never trust a type.

An agent (or a patch) decides what every path of its tree is: a file, a folder, a symlink to
anywhere on the host, a FIFO that blocks whoever opens it. The harness still has to write its
own files there (a runner configuration, a prompt), read a few back and remove what it must. So
every such operation here walks the path one component at a time from a descriptor of the
tree's root, with ``O_NOFOLLOW``: a component that is not a real folder is never entered, a
final name that is a link or a special file is never opened, and a file the harness writes is
created afresh (``O_CREAT | O_EXCL``) after whatever stood at its name was removed. Each thing
removed on the way is returned, so the caller records it as tampering.

**Any depth.** An agent can nest folders far deeper than Python's recursion limit, and past the
longest path the system opens (``PATH_MAX``). ``os.walk``, ``Path.rglob`` and ``shutil.rmtree`` of
Python 3.11 recurse once per level (``RecursionError`` at about a thousand), and a whole path
names nothing past ``PATH_MAX``. So ``walk`` and every removal here go one level at a time from
an open descriptor, climbing back through ``..`` (checked against the folder they left), with a
fixed number of descriptors open whatever the depth.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class NotAFile(FileNotFoundError):
    """The path is a link, a folder or a special file: for the harness, there is no file to read."""


def kind(root: Path, rel: str) -> str | None:
    """What stands at ``rel`` (``file``, ``folder``, ``link``, ``special``), without following; None if nothing
    (or a parent on the way is not a real folder)."""
    try:
        with _Parent(root, rel) as (fd, name):
            return _kind(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except (FileNotFoundError, NotADirectoryError, NotAFile):
        return None


def remove(root: Path, rel: str) -> str | None:
    """Remove whatever stands at ``rel`` (a folder whole, a link itself); return its kind, or None if nothing was there."""
    try:
        with _Parent(root, rel) as (fd, name):
            return _remove(fd, name)
    except (FileNotFoundError, NotADirectoryError, NotAFile):
        return None


def write_file(root: Path, rel: str, data: bytes | str, mode: int | None = None) -> list[str]:
    """Create ``rel`` afresh with ``data``; return what stood in the way and was removed (not a plain file it replaces).

    Parent folders are created; a parent that is a link or a file is removed and made a folder. The
    file gets ``mode``, else the mode of the plain file it replaces, else 0o644.
    """
    replaced: list[str] = []
    with _Parent(root, rel, create=replaced) as (fd, name):
        if mode is None and kind_at(fd, name) == "file":
            mode = stat.S_IMODE(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        found = _remove(fd, name)
        if found not in (None, "file"):
            replaced.append(rel)
        mode = 0o644 if mode is None else mode
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
        with os.fdopen(out, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
    return replaced


def write_link(root: Path, rel: str, target: str) -> list[str]:
    """Create the symlink ``rel`` → ``target`` afresh (a link the reference itself has); return what stood in the way."""
    replaced: list[str] = []
    with _Parent(root, rel, create=replaced) as (fd, name):
        if _remove(fd, name) not in (None, "file"):
            replaced.append(rel)
        os.symlink(target, name, dir_fd=fd)
    return replaced


def make_dir(root: Path, rel: str) -> list[str]:
    """Make ``rel`` a real, empty-if-new folder; return what stood in the way and was removed."""
    replaced: list[str] = []
    with _Parent(root, rel, create=replaced) as (fd, name):
        found = kind_at(fd, name)
        if found not in (None, "folder"):
            _remove(fd, name)
            replaced.append(rel)
        if found != "folder":
            os.mkdir(name, 0o755, dir_fd=fd)
    return replaced


def read_file(root: Path, rel: str) -> bytes:
    """The bytes of the regular file at ``rel``; ``NotAFile`` for a link, a folder or a special file on the way."""
    with _Parent(root, rel) as (fd, name):
        try:
            handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                raise NotAFile(errno.ENOENT, f"{rel} is not a regular file") from None
            raise
        return read_open(handle, rel)


def read_open(handle: int, what: str) -> bytes:
    """Read a descriptor opened with ``O_NONBLOCK`` if it is a regular file (closing it either way)."""
    with os.fdopen(handle, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise NotAFile(errno.ENOENT, f"{what} is not a regular file")
        return f.read()


def walk(root: Path) -> Iterator[tuple[str, str]]:
    """``(path relative to root, kind)`` of everything under ``root``, each folder before what it holds,
    at any depth (see the module docstring); a link is never followed. The caller may remove what was
    just yielded: a folder gone before its turn is skipped. A ``root`` that is not there holds nothing."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except PermissionError:  # the agent owns the tree's root as well (see _open_folder)
        os.chmod(root, stat.S_IMODE(os.stat(root).st_mode) | stat.S_IRWXU)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    _owner_rwx(fd)
    try:
        levels = [("", _listing(fd), os.fstat(fd))]  # (prefix, entries still to yield, the folder's identity)
        while levels:
            prefix, pending, _ = levels[-1]
            if not pending:
                levels.pop()
                if levels:
                    fd = _climb(fd, levels[-1][2])
                continue
            name, found = pending.pop()
            yield prefix + name, found
            if found != "folder":
                continue
            try:
                inner = _open_folder(fd, name)
            except (FileNotFoundError, NotADirectoryError):
                continue  # removed by the caller, or no longer a folder
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                continue
            os.close(fd)
            fd = inner
            levels.append((f"{prefix}{name}/", _listing(fd), os.fstat(fd)))
    finally:
        os.close(fd)


def let_owner_read(root: Path, rel: str) -> bool:
    """Give the regular file at ``rel`` its owner's read permission back if the harness's user owns it
    and it has none (``chmod 000`` by an agent running as that user); return whether it was changed.

    git reads every file it adds, hashes or checks out over, and stops at the first it cannot
    open (``fatal: adding files failed``): for a harness that is not root that was an
    infrastructure error the agent caused. Only the read bit is given: git records a file's
    content and executable bit, and neither changes.
    """
    path = os.path.join(os.fsencode(root), os.fsencode(rel))
    try:
        info = os.lstat(path)
    except OSError:  # gone, or a path longer than the system opens (git cannot hold it either)
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_mode & stat.S_IRUSR or info.st_uid != os.geteuid():
        return False
    # The agent's sandbox has ended, so the tree stands still: a regular file found by lstat is not a link.
    os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IRUSR)
    return True


def remove_named(root: Path, name: str) -> list[str]:
    """Remove every entry called ``name`` under ``root`` (a folder whole, never entered); return their paths."""
    found = []
    for rel, _ in walk(root):
        if rel.rpartition("/")[2] == name:
            remove(root, rel)
            found.append(rel)
    return sorted(found)


def clear(path: Path) -> None:
    """Remove whatever stands at the harness's own ``path`` (an agent-made tree inside it, at any depth)."""
    remove(path.parent, path.name)


def copy_out(root: Path, rel: str, dest: Path, *, max_depth: int = 8) -> None:
    """Copy the folder ``rel`` of an agent's tree to the harness's fresh ``dest``, for people to read.

    Files and folders down to ``max_depth`` levels are copied, links as links (never followed);
    special files and anything deeper are left out, so no shape of the agent's tree (a FIFO, a
    folder chain deeper than Python recurses or paths can be) can stop the copy.
    """
    clear(dest)
    dest.mkdir(parents=True)
    if kind(root, rel) != "folder":
        return
    source = root / rel
    for inner, found in walk(source):
        if inner.count("/") >= max_depth:
            continue
        if found == "folder":
            (dest / inner).mkdir(exist_ok=True)
        elif found == "file":
            try:
                (dest / inner).write_bytes(read_file(source, inner))
            except NotAFile:  # replaced while walked
                continue
        elif found == "link":
            os.symlink(os.readlink(source / inner), dest / inner)


def link_leaves(root: Path, rel: str) -> bool:
    """Whether the symlink at ``rel`` points outside ``root`` (absolute, or ``..`` past the root), read lexically."""
    with _Parent(root, rel) as (fd, name):
        target = os.readlink(name, dir_fd=fd)
    if posixpath.isabs(target):
        return True
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    return joined == ".." or joined.startswith("../")


def remove_leaving_links(root: Path) -> list[str]:
    """Remove every symlink under ``root`` that points outside it (``link_leaves``); return their paths."""
    found = []
    for rel, found_kind in walk(root):  # never descends into a linked folder
        if found_kind == "link" and link_leaves(root, rel):
            remove(root, rel)
            found.append(rel)
    return sorted(found)


def kind_at(fd: int, name: str) -> str | None:
    try:
        return _kind(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return None


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "special"


def _remove(fd: int, name: str) -> str | None:
    found = kind_at(fd, name)
    if found == "folder":
        _remove_folder(fd, name)
    elif found is not None:
        os.unlink(name, dir_fd=fd)
    return found


def _remove_folder(parent: int, name: str) -> None:
    """Delete the folder ``name`` of ``parent`` and all it holds, deepest first, never through a link."""
    fd = _open_folder(parent, name)
    try:
        levels = [(name, _folders_after_unlinking(fd), os.fstat(fd))]  # (folder, folders still to delete, identity)
        while True:
            _, pending, _ = levels[-1]
            if pending:
                inner = _open_folder(fd, pending[-1])
                os.close(fd)
                fd = inner
                levels.append((pending.pop(), _folders_after_unlinking(fd), os.fstat(fd)))
                continue
            done = levels.pop()[0]
            if not levels:
                break
            fd = _climb(fd, levels[-1][2])
            os.rmdir(done, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _open_folder(parent: int, name: str) -> int:
    """Open the folder ``name`` of ``parent`` (never a link) so its entries can be listed and removed.

    An agent's commands run as the harness's own user in both sandboxes, so it can take its folders'
    permissions away (``chmod 000``, or ``555`` so nothing inside can be unlinked). For anyone but
    root that made the harness's scans and removals raise, an infrastructure error the agent
    caused: its task was retried and never scored. A folder the harness's user owns is given its
    owner's permissions back first (folder modes are not part of what is graded); ``walk`` does
    the same for the tree's root, which the agent owns as well.
    """
    try:
        fd = os.open(name, _DIR, dir_fd=parent)
    except PermissionError:
        handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        try:
            os.chmod(f"/proc/self/fd/{handle}", stat.S_IMODE(os.fstat(handle).st_mode) | stat.S_IRWXU)
        finally:
            os.close(handle)
        fd = os.open(name, _DIR, dir_fd=parent)
    _owner_rwx(fd)
    return fd


def _owner_rwx(fd: int) -> None:
    """Give the open folder ``fd`` its owner's permissions back if the harness's user owns it (``fd`` is
    closed if that fails)."""
    found = os.fstat(fd)
    if found.st_mode & stat.S_IRWXU != stat.S_IRWXU and found.st_uid == os.geteuid():
        try:
            os.fchmod(fd, stat.S_IMODE(found.st_mode) | stat.S_IRWXU)
        except BaseException:
            os.close(fd)
            raise


def _folders_after_unlinking(fd: int) -> list[str]:
    """Unlink every entry of the open folder ``fd`` that is not a folder; return the folders' names."""
    folders = []
    for name, found in _listing(fd):
        if found == "folder":
            folders.append(name)
        else:
            os.unlink(name, dir_fd=fd)
    return folders


def _listing(fd: int) -> list[tuple[str, str]]:
    """(name, kind) of each entry of the open folder ``fd``, in reverse order (popped from the end, sorted)."""
    with os.scandir(fd) as entries:
        found = [(e.name, _entry_kind(e)) for e in entries]
    return sorted(found, reverse=True)


def _entry_kind(entry: os.DirEntry) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    return "file" if entry.is_file(follow_symlinks=False) else "special"


def _climb(fd: int, parent: os.stat_result) -> int:
    """The open parent of folder ``fd``, proved to be the folder the walk came from; ``fd`` is closed."""
    up = os.open("..", _DIR, dir_fd=fd)
    found = os.fstat(up)
    if (found.st_dev, found.st_ino) != (parent.st_dev, parent.st_ino):
        os.close(up)
        raise OSError(errno.ESTALE, "a folder was moved while the harness walked its tree — run the task again")
    os.close(fd)
    return up


class _Parent:
    """The open folder that holds ``rel``'s last component, reached without following links.

    With ``create`` (a list), missing parents are made and a parent that is not a real folder is
    removed, made a folder, and appended to the list; without it, such a parent raises ``NotAFile``.
    """

    def __init__(self, root: Path, rel: str, create: list[str] | None = None):
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts or "." in parts:
            raise ValueError(f"path {rel!r} must be relative to the tree, without '..'")
        self.root, self.parts, self.create = root, parts, create
        self.fds: list[int] = []

    def __enter__(self) -> tuple[int, str]:
        if self.create is not None:  # the root is the harness's own folder: made if missing, as before
            Path(self.root).mkdir(parents=True, exist_ok=True)
        self.fds.append(os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        for depth, name in enumerate(self.parts[:-1]):
            self.fds.append(self._enter(self.fds[-1], name, "/".join(self.parts[: depth + 1])))
            os.close(self.fds.pop(-2))  # one descriptor at a time, however deep the path
        return self.fds[-1], self.parts[-1]

    def _enter(self, fd: int, name: str, rel: str) -> int:
        try:
            return _open_folder(fd, name)
        except OSError as exc:
            if self.create is None:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise NotAFile(errno.ENOENT, f"{rel} is not a real folder") from None
                raise
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                _remove(fd, name)
                self.create.append(rel)
            elif exc.errno != errno.ENOENT:
                raise
            os.mkdir(name, 0o755, dir_fd=fd)
            return os.open(name, _DIR, dir_fd=fd)

    def __exit__(self, *exc) -> None:
        for fd in reversed(self.fds):
            os.close(fd)
