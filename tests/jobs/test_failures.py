"""Classification of failed training attempts, on the texts real failures print (sources in the comments)."""

from __future__ import annotations

from standin_verl import HCCL_ERROR

from gspo_cli.jobs.failures import backoff_s, classify

# torch's NCCL watchdog on a collective timeout (as quoted in OpenRLHF issue #1126).
NCCL_TIMEOUT = ("[rank7]:[E901 05:20:03.463564641 ProcessGroupNCCL.cpp:1899] [PG ID 0 PG GUID 0(default_pg) Rank 7] "
                "Process group watchdog thread terminated with exception: [Rank 7] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=460631, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                "Timeout(ms)=600000) ran for 600020 milliseconds before timing out.")
RAY_NODE_DIED = ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
                 "\tclass_name: WorkerDict\n\tThe actor is dead because its node has died. Node Id: 5c1f")
NPU_OOM = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 3; 60.97 GiB total capacity)"
HYDRA = "omegaconf.errors.ConfigAttributeError: Key 'nope' is not in struct\n    full_key: trainer.nope"
VERL_NO_GPU = "ValueError: Total available GPUs 0 is less than total desired GPUs 1"


def test_transient_failures_are_restarted():
    for text in (HCCL_ERROR, NCCL_TIMEOUT, RAY_NODE_DIED):
        kind, cause = classify(1, text.splitlines())
        assert kind == "transient", (text, cause)
    assert "OPS function error: HcclAllreduce, error code is 6" in classify(1, HCCL_ERROR.splitlines())[1]
    assert classify(-9, ["step 12"]) == ("transient", "killed by signal SIGKILL")
    assert classify(137, []) == ("transient", "killed by signal SIGKILL")
    assert classify(-15, [], stopped_by="stall")[0] == "transient"


def test_out_of_memory_is_transient_only_after_steps_succeeded():
    assert classify(1, [NPU_OOM], made_progress=True)[0] == "transient"
    kind, cause = classify(1, [NPU_OOM], made_progress=False)
    assert kind == "config" and "does not fit" in cause


def test_configuration_and_data_errors_and_unknown_errors_are_never_retried():
    assert classify(2, ["Error: prepared data missing: /x/train.parquet"])[0] == "config"
    assert classify(1, HYDRA.splitlines())[0] == "config"
    assert classify(1, ["Traceback ...", VERL_NO_GPU]) == ("fatal", VERL_NO_GPU)
    assert classify(-15, [], stopped_by="nonfinite") == ("stopped", "health rule nonfinite stopped the run")


def test_backoff_doubles_up_to_its_cap():
    assert [backoff_s(k, 30, 600) for k in (1, 2, 3, 4, 5, 6)] == [30, 60, 120, 240, 480, 600]
