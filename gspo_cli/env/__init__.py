"""Environment diagnosis for Ascend (and GPU/CPU) hosts: probes, checks, the version matrix, exports, cluster start.

Probes read the filesystem and run commands through a `Host` (an injectable root path, environment and command
runner) so tests run them against fixture trees and fake executables. Python packages are probed in
subprocesses only: a broken torch_npu must not take the doctor down, and importing it here would also patch
`import torch` in this process.
"""
