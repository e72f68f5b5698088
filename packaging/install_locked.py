"""Install DocDesk into the running Python environment exactly as `requirements.lock` says.

    CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70" python packaging/install_locked.py --flavour cuda-sm70

Called by the Makefile (`make run`, `make test`, `make dist`); it uses nothing but pip and the
standard library, because it runs before anything else is installed. Steps:

1. torch, the CPU build (+cpu), from PyTorch's CPU index: it is not on PyPI under that name.
   Only this step may look there, since an unreachable extra index costs seconds per package.
2. Everything else in the lock except llama-cpp-python, hash-checked, without dependency
   resolution (the lock already is the resolution).
3. llama-cpp-python: a wheel built once per (version, flavour) from the lock's hash-checked sdist,
   with the CMake flags the Makefile chose for this machine's GPU, then kept in a cache folder.
   pip's own wheel cache cannot do this: it keys built wheels by sdist, not by CMAKE_ARGS, and
   would hand a CPU build to a GPU machine.
4. DocDesk itself, editable, then `pip check`. With `--wheel docdesk-*.whl`, that built wheel
   instead (packaging/test_wheel.sh: the wheel in a clean venv, as users install it).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
LLAMA = "llama-cpp-python"


def read_lock(path: Path = LOCK) -> dict[str, str]:
    """name -> the requirement as written (pin and hashes joined on one line)."""
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    pins: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if match:
            pins[normalize(match.group(1))] = line
    return pins


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def version_of(requirement: str) -> str:
    return requirement.split("==", 1)[1].split()[0]


def pip(*args: str, env: dict | None = None) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    print("+ pip " + " ".join(a for a in args if not a.startswith("--hash")), flush=True)
    subprocess.run(command, check=True, env=env)


def requirements_file(lines: list[str], folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def installed_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def cache_root() -> Path:
    """DocDesk's build cache: DOCDESK_CACHE, else the platform's (~/.cache/docdesk on Linux)."""
    if os.environ.get("DOCDESK_CACHE"):
        return Path(os.environ["DOCDESK_CACHE"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "docdesk"


def wheel_cache(version: str, flavour: str) -> Path:
    base = os.environ.get("DOCDESK_WHEEL_CACHE") or cache_root() / "wheels"
    return Path(base) / f"{LLAMA}-{version}-{flavour}"


def locked_sdist(requirement: str, scratch: Path) -> Path:
    """The lock's llama-cpp-python sdist, hash-checked."""
    folder = scratch / "sdist"
    pip(
        "download", "--no-deps", "--no-build-isolation", "--no-binary", ":all:", "--require-hashes", "-d", str(folder),
        "-r", str(requirements_file([requirement], scratch, "llama.txt")),
    )  # fmt: skip
    return next(folder.glob("*.tar.gz"))


def llama_server(requirement: str, flavour: str, cmake_args: str, scratch: Path, sdist: Path | None = None) -> Path:
    """llama.cpp's `llama-server`, built from the llama.cpp that the locked llama-cpp-python
    vendors (the same code as the in-process backend), once per version and flavour."""
    import shutil
    import tarfile

    version = version_of(requirement)
    target = cache_root() / "llama-server" / f"{version}-{flavour}" / "llama-server"
    if target.is_file():
        print(f"llama-server {version} ({flavour}): cached {target}", flush=True)
        return target
    print(f"llama-server {version} ({flavour}): building once, {cmake_args!r} (several minutes)", flush=True)
    sdist = sdist or locked_sdist(requirement, scratch)
    if sdist.is_file():
        with tarfile.open(sdist) as archive:
            archive.extractall(scratch / "src", filter="data")
        sdist = next((scratch / "src").iterdir())
    flags = [f for f in cmake_args.split() if not f.startswith("-DLLAVA")]  # llama-cpp-python's own option
    build = scratch / "build"
    cmake = ["cmake", "-S", str(sdist / "vendor" / "llama.cpp"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
    cmake += ["-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_UI=OFF"]
    cmake += ["-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_OPENSSL=OFF", *flags]
    print("+ " + " ".join(cmake), flush=True)
    subprocess.run(cmake, check=True, stdout=subprocess.DEVNULL)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    subprocess.run(["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs], check=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(build / "bin" / "llama-server", target.with_suffix(".tmp"))
    target.with_suffix(".tmp").replace(target)  # a half-copied binary is never found as built
    (target.parent / "CMAKE_ARGS").write_text(" ".join(flags) + "\n", encoding="utf-8")
    return target


def llama_wheel(
    requirement: str,
    flavour: str,
    cmake_args: str,
    scratch: Path,
    sdist: Path | None = None,
    build_dir: Path | None = None,
) -> Path:
    """The cached wheel for this version and flavour, built from the locked sdist if missing.

    `sdist` is a local copy for a machine without network (not hash-checked); `build_dir` keeps
    the CMake tree, so llama.cpp's own tools can be built from it afterwards.
    """
    version = version_of(requirement)
    cache = wheel_cache(version, flavour)
    found = sorted(cache.glob("llama_cpp_python-*.whl"))
    if found:
        print(f"{LLAMA} {version} ({flavour}): cached wheel {found[-1]}", flush=True)
        return found[-1]
    print(f"{LLAMA} {version} ({flavour}): building once, CMAKE_ARGS={cmake_args!r} (several minutes)", flush=True)
    sdist = sdist or locked_sdist(requirement, scratch)
    built = scratch / "wheel"
    env = dict(os.environ, CMAKE_ARGS=cmake_args)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    keep = [f"--config-settings=build-dir={build_dir}"] if build_dir else []
    # No build isolation: scikit-build-core comes from the lock, not from whatever the index serves.
    pip("wheel", "--no-deps", "--no-build-isolation", "--no-cache-dir", *keep, "-w", str(built), str(sdist), env=env)
    wheel = next(built.glob("llama_cpp_python-*.whl"))
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "CMAKE_ARGS").write_text(cmake_args + "\n", encoding="utf-8")
    target = cache / wheel.name
    wheel.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--flavour", default="cpu", help="names the llama-cpp-python build in the cache (cpu, cuda-sm70)"
    )
    parser.add_argument("--extras", default="dev", help="DocDesk extras to install editable (default: dev)")
    parser.add_argument(
        "--torch-index",
        default=os.environ.get("DOCDESK_TORCH_INDEX", TORCH_CPU_INDEX),
        help="where torch's +cpu build is; '' for none (pip's own find-links or indexes have it)",
    )
    parser.add_argument("--build-only", action="store_true", help="only build (or find) the llama-cpp-python wheel")
    parser.add_argument("--llama-server", action="store_true", help="only build (or find) llama.cpp's llama-server")
    parser.add_argument("--sdist", type=Path, help="a local llama-cpp-python sdist, for a machine without network")
    parser.add_argument("--build-dir", type=Path, help="keep llama-cpp-python's CMake build tree here")
    parser.add_argument("--python", help="the Python version the lock was made for (X.Y); another one is refused")
    parser.add_argument(
        "--wheel", type=Path, help="install this built DocDesk wheel (docdesk-*.whl) instead of the checkout, editable"
    )
    args = parser.parse_args(argv)
    if args.wheel and not re.fullmatch(r"docdesk-.+\.whl", args.wheel.name):
        sys.exit(f"--wheel {args.wheel}: not a DocDesk wheel (docdesk-*.whl)")
    if args.wheel and not args.wheel.is_file():
        sys.exit(f"--wheel {args.wheel}: no such file")
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if args.python and running != args.python:
        sys.exit(
            f"{LOCK.name} is made for Python {args.python} and this is {running}: "
            f"make PYTHON=python{args.python} ..., or `make lock` to resolve for {running}"
        )
    cmake_args = os.environ.get("CMAKE_ARGS", "")
    pins = read_lock()
    if LLAMA not in pins or "torch" not in pins:
        sys.exit(f"{LOCK.name} pins no {LLAMA} or torch: run `make lock`")

    with tempfile.TemporaryDirectory(prefix="docdesk-install-") as tmp:
        scratch = Path(tmp)
        if args.llama_server:
            print(llama_server(pins[LLAMA], args.flavour, cmake_args, scratch, args.sdist))
            return 0
        if args.build_only:
            print(llama_wheel(pins[LLAMA], args.flavour, cmake_args, scratch, args.sdist, args.build_dir))
            return 0
        if "pip" in pins:
            pip("install", "--quiet", "--require-hashes", "--no-deps",
                "-r", str(requirements_file([pins["pip"]], scratch, "pip.txt")))  # fmt: skip
        if installed_version("torch") != version_of(pins["torch"]):
            torch_index = ["--extra-index-url", args.torch_index] if args.torch_index else []
            pip("install", "--quiet", "--require-hashes", "--no-deps", *torch_index,
                "-r", str(requirements_file([pins["torch"]], scratch, "torch.txt")))  # fmt: skip
        rest = [line for name, line in pins.items() if name not in (LLAMA, "torch", "pip")]
        pip("install", "--quiet", "--require-hashes", "--no-deps",
            "-r", str(requirements_file(rest, scratch, "rest.txt")))  # fmt: skip
        wheel = llama_wheel(pins[LLAMA], args.flavour, cmake_args, scratch, args.sdist, args.build_dir)
        pip("install", "--quiet", "--no-deps", "--force-reinstall", str(wheel))
    if args.wheel:  # its dependencies are the lock's, installed above; `pip check` holds them to its bounds
        pip("install", "--quiet", "--no-deps", "--force-reinstall", str(args.wheel))
    else:
        pip("install", "--quiet", "--no-deps", "--no-build-isolation", "-e", f"{ROOT}[{args.extras}]")
    pip("check")
    print(f"installed from {LOCK.name}; {LLAMA} {version_of(pins[LLAMA])} ({args.flavour})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
