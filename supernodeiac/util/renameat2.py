"""Linux's renameat2(2): swap two paths in one step (RENAME_EXCHANGE), or rename without replacing
(RENAME_NOREPLACE). Python's os module has neither.

The writer swaps a finished render with the previous one by exchanging the two folders, so the
output folder is never missing, not even for an instant, and a process killed at any moment
leaves the old render or the new one in place. glibc 2.28+ has a ``renameat2`` wrapper; older
C libraries are reached through ``syscall(2)`` with the call's number for the machine. Where
neither exists (another OS, an unknown architecture, a kernel before 3.15) or the file system
refuses the flag (EINVAL: some network and FUSE file systems), the caller is told so and falls
back to plain renames (see ``writer``).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
from collections.abc import Callable
from functools import cache

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_AT_FDCWD = -100
# renameat2's system call number where glibc has no wrapper (from the kernel's syscall tables).
_SYSCALL_NUMBERS = {
    "x86_64": 316,
    "aarch64": 276,
    "riscv64": 276,
    "i386": 353,
    "i686": 353,
    "armv7l": 382,
    "ppc64le": 357,
    "s390x": 347,
}
# errno values that mean "not here" rather than "this rename failed".
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP}


@cache
def _renameat2() -> Callable[[bytes, bytes, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    fn = getattr(libc, "renameat2", None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        return lambda src, dst, flags: fn(_AT_FDCWD, src, _AT_FDCWD, dst, flags)
    number = _SYSCALL_NUMBERS.get(platform.machine())
    syscall = getattr(libc, "syscall", None)
    if number is None or syscall is None:
        return None
    syscall.restype = ctypes.c_long

    def raw(src: bytes, dst: bytes, flags: int) -> int:
        args = (ctypes.c_int(_AT_FDCWD), ctypes.c_char_p(src), ctypes.c_int(_AT_FDCWD), ctypes.c_char_p(dst))
        return syscall(ctypes.c_long(number), *args, ctypes.c_uint(flags))

    return raw


def rename2(src: str | os.PathLike[str], dst: str | os.PathLike[str], flags: int) -> bool:
    """renameat2(src, dst, flags): True when done, False when this system or file system cannot
    do it (nothing has changed then); any other failure raises OSError as os.rename does."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(os.fsencode(src), os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), os.fspath(src), None, os.fspath(dst))


def exchange(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Swap two existing paths atomically; False when unsupported here (nothing changed)."""
    return rename2(a, b, RENAME_EXCHANGE)


def rename_noreplace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> bool:
    """Rename unless ``dst`` exists (FileExistsError then); False when unsupported here."""
    return rename2(src, dst, RENAME_NOREPLACE)
