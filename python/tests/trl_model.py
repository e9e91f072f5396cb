# SPDX-License-Identifier: Apache-2.0
"""A model of TRL's GRPOTrainer across training processes, written after huggingface/trl at commit
f2cd57710ae345ea6428ae95363267fcf38a3dc8 (1.10.0.dev0), for tests that cannot install TRL, accelerate,
transformers or vLLM.

Each training process (an accelerate rank) is a process of its own; accelerate's collectives
(gather, gather_object, broadcast_object_list) meet through a barrier, in process order, and block
until every rank has called them, as torch.distributed's do. In each rank:

  GRPOTrainer._generate (grpo_trainer.py:2143-2258): with rollout_func, the vLLM weights synced first
      (2151-2155: sync_weights when use_vllm), rollout_func(prompts, trainer), its required keys, the
      extra fields, env_mask as the tool mask (2212-2214), completions decoded (2178-2189)
  GRPOTrainer._calculate_rewards (1612-1700): reward functions called with every column but prompt
      as keywords (one list each), trainer_state/log_extra/log_metric, then gathered
  GRPOTrainer._generate_and_score_completions (2260-2830): the extra fields merged into the inputs
      (2661-2667), the group z-score over the gathered rewards (2697-2730), the process's slice
      (2733-2738), the logged advantages (2757), the vLLM importance-sampling ratio, which needs the
      rollout's log-probs (2576-2590: old - sampling log-probs)
  VLLMGeneration.generate in server mode (trl/generation/vllm_generation.py:551-610): a collective,
      every rank's prompts gathered, rank 0 alone holding a client that calls the server, the result
      broadcast
  the TRL vLLM server (trl vllm-serve): POST /generate/ with prompts as token ids, n, max_tokens,
      logprobs (trl/generation/vllm_client.py:204-296), here an HTTP server in the test's process whose
      completions follow a script and which records each request's weight version and concurrency

and a tokenizer of characters whose apply_chat_template(tokenize=True) returns a BatchEncoding (a
mapping) unless return_dict=False, as transformers 5 does (``batch_encoding=True``), or the ids, as 4
does. Not modelled: a model, the loss, transformers' own padding, eval mode.
"""
import asyncio
import http.server
import json
import math
import os
import sys
import threading
import time
import traceback
import types

TRL_COMMIT = "f2cd57710ae345ea6428ae95363267fcf38a3dc8"


# ---- accelerate's collectives across processes ---------------------------------------------------------

class Collective:
    """gather / gather_object / broadcast_object_list for ranks that are processes: each call waits at a
    barrier for every rank (a rank that calls one collective more often than the others waits until the
    barrier's timeout, as a hung NCCL call does)."""

    def __init__(self, manager, world, timeout=60.0):
        self.barrier = manager.Barrier(world, timeout=timeout)
        self.slots = manager.list([None] * world)
        self.world = world
        self.rank = 0
        self.calls = 0

    def exchange(self, value):
        self.calls += 1
        self.slots[self.rank] = value
        self.barrier.wait()
        values = list(self.slots)
        self.barrier.wait()
        return values


def install_accelerate(collective):
    """accelerate and accelerate.utils as modules whose collectives are `collective`'s."""
    import torch
    accelerate = types.ModuleType("accelerate")
    utils = types.ModuleType("accelerate.utils")
    utils.gather = lambda tensor: torch.cat(collective.exchange(tensor))
    utils.gather_object = lambda values: [v for part in collective.exchange(list(values)) for v in part]

    def broadcast_object_list(objects, from_process=0):
        values = collective.exchange(list(objects))
        objects[:] = values[from_process]
        return objects

    utils.broadcast_object_list = broadcast_object_list
    accelerate.utils = utils
    sys.modules["accelerate"] = accelerate
    sys.modules["accelerate.utils"] = utils
    return utils


# ---- a tokenizer ---------------------------------------------------------------------------------------

class CharTokenizer:
    """Token = character code; the chat template writes <role>content per message and <assistant> for the
    generation prompt. batch_encoding=True: apply_chat_template(tokenize=True) returns a BatchEncoding (a
    mapping of input_ids and attention_mask) unless return_dict=False, as transformers 5 does."""

    eos_token_id = None
    pad_token_id = 0

    def __init__(self, batch_encoding=False):
        self.batch_encoding = batch_encoding

    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)

    def batch_decode(self, batch, skip_special_tokens=True):
        return [self.decode(ids) for ids in batch]

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=False, return_dict=None,
                            chat_template=None, **kwargs):
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + ("<assistant>" if add_generation_prompt else "")
        if not tokenize:
            return text
        ids = self.encode(text)
        if (self.batch_encoding if return_dict is None else return_dict):
            return {"input_ids": ids, "attention_mask": [1] * len(ids)}  # transformers' BatchEncoding is a dict
        return ids


# ---- the vLLM server -----------------------------------------------------------------------------------

def completion_text(task, member, turn, verdict, speedup):
    return f"```cuda\n// {verdict} {speedup} turn {turn} member {member} task {task}\n```"


class VllmServer:
    """The TRL vLLM server's /generate/ and the weight version the trainer pushed (rank 0's client does,
    vllm_generation.py:387-390). The completion for a conversation follows plans[task][member]: task and
    member are in its first user message, the turn is the count of user messages. Each request waits
    `delay` seconds, a weight update `sync_delay` seconds; the server records the most requests in flight
    at once."""

    def __init__(self, plans, delay=0.0, sync_delay=0.0):
        self.plans, self.delay, self.sync_delay = plans, delay, sync_delay
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0
        self.weights_version = 0
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/update_named_param/":
                    time.sleep(server.sync_delay)
                    with server.lock:
                        server.weights_version += 1
                    reply = {}
                else:
                    reply = server.generate(body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def generate(self, body):
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            version = self.weights_version
        try:
            time.sleep(self.delay)
            prompts, completions, logprobs = [], [], []
            for prompt in body["prompts"]:
                text = "".join(chr(i) for i in prompt)
                task, member = text.split("kernel for ", 1)[1].split("<", 1)[0].split(" #")
                turn = text.count("<user>")
                plan = self.plans[task][int(member)]
                verdict, speedup = plan[min(turn, len(plan)) - 1]
                ids = [ord(c) for c in completion_text(task, member, turn, verdict, speedup)][:body["max_tokens"]]
                for _ in range(body["n"]):
                    prompts.append(prompt)
                    completions.append(ids)
                    logprobs.append([[-0.25] for _ in ids] if body.get("logprobs") is not None else None)
            with self.lock:
                self.requests.append({"prompts": len(body["prompts"]), "weights_version": version,
                                      "max_tokens": body["max_tokens"]})
            return {"prompt_ids": prompts, "completion_ids": completions, "logprobs": logprobs,
                    "logprob_token_ids": None}
        finally:
            with self.lock:
                self.in_flight -= 1

    def close(self):
        self.http.shutdown()
        self.http.server_close()


def _post(url, payload):
    import urllib.request
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


class VLLMGeneration:
    """trl/generation/vllm_generation.py in server mode: sync_weights from rank 0 (387-390, 444-500) and
    generate, a collective (551-610)."""

    def __init__(self, accelerator, utils, base_url, max_completion_length):
        self.accelerator, self.utils, self.base_url = accelerator, utils, base_url
        self.max_completion_length = max_completion_length
        self.mode = "server"

    def sync_weights(self):
        if self.accelerator.is_main_process:
            _post(self.base_url + "/update_named_param/", {"name": "model", "dtype": "bf16", "shape": [1]})

    def generate(self, prompts, images, num_generations, profiler=None):
        all_prompts = self.utils.gather_object(prompts)
        if self.accelerator.is_main_process:
            output = _post(self.base_url + "/generate/", {
                "prompts": all_prompts[::num_generations], "n": num_generations, "max_tokens": self.max_completion_length,
                "logprobs": 0, "temperature": 1.0})
            payload = (output["prompt_ids"], output["completion_ids"], output["logprobs"], None)
        else:
            payload = None
        objects = [payload]
        self.utils.broadcast_object_list(objects, from_process=0)
        _, completion_ids, logprobs, _ = objects[0]
        local = slice(self.accelerator.process_index * len(prompts), (self.accelerator.process_index + 1) * len(prompts))
        return None, completion_ids[local], logprobs[local], None


# ---- GRPOTrainer ---------------------------------------------------------------------------------------

def nanstd(tensor):
    import torch
    return torch.sqrt(torch.nanmean((tensor - torch.nanmean(tensor, dim=-1, keepdim=True)) ** 2, dim=-1)
                      * tensor.shape[-1] / (tensor.shape[-1] - 1))


class GRPOTrainer:
    """The parts of GRPOTrainer at the pinned commit that lead from the rollout to the advantages
    (sum_then_normalize, scale_rewards="group"), with its metrics and logs."""

    def __init__(self, *, reward_funcs, args, rollout_func, accelerator, processing_class, utils, vllm_base_url=None):
        import torch
        from collections import defaultdict, deque
        self.args = args
        self.reward_funcs = reward_funcs
        self.reward_func_names = [getattr(f, "__name__", "reward") for f in reward_funcs]
        self.reward_weights = torch.ones(len(reward_funcs))
        self.num_generations = self.num_generations_eval = args.num_generations
        self.rollout_func = rollout_func
        self.accelerator = accelerator
        self.processing_class = processing_class
        self.chat_template, self.chat_template_kwargs = None, args.chat_template_kwargs or {}
        self.model = types.SimpleNamespace(training=True)
        self.state = types.SimpleNamespace(global_step=0)
        self._last_loaded_step = -1
        self.use_vllm, self.vllm_mode = args.use_vllm, args.vllm_mode
        self.vllm_importance_sampling_correction = args.vllm_importance_sampling_correction
        self.utils = utils
        self.vllm_generation = VLLMGeneration(accelerator, utils, vllm_base_url, args.max_completion_length) \
            if args.use_vllm else None
        self._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
        self._logs = {"advantages": deque(maxlen=1000), "rewards": defaultdict(lambda: deque(maxlen=1000))}
        self._pending_metrics = defaultdict(list)

    def _log_metric(self, name, value):
        self._pending_metrics[name].append(value)

    def _generate(self, prompts):
        if self.rollout_func is not None:
            if self.use_vllm and self.state.global_step != self._last_loaded_step:  # 2151-2155
                self.vllm_generation.sync_weights()
                self._last_loaded_step = self.state.global_step
            output = self.rollout_func(prompts, self)
            missing = {"prompt_ids", "completion_ids", "logprobs"} - output.keys()
            if missing:
                raise ValueError(f"rollout_func must return keys {sorted(missing)} in its output dict.")
            extra_fields = {k: v for k, v in output.items() if k not in ("prompt_ids", "completion_ids", "logprobs")}
            prompt_ids, completion_ids, logprobs = output["prompt_ids"], output["completion_ids"], output["logprobs"]
        else:
            raise NotImplementedError("the model covers rollout_func only")
        completions = self.processing_class.batch_decode(completion_ids, skip_special_tokens=True)
        tool_mask = extra_fields.pop("env_mask", None)
        return prompt_ids, completion_ids, tool_mask, completions, logprobs, extra_fields

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        import torch
        rewards_per_func = torch.zeros(len(prompts), len(self.reward_funcs))
        keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
        reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
        reward_kwargs["trainer_state"], reward_kwargs["log_metric"] = self.state, self._log_metric
        for i, reward_func in enumerate(self.reward_funcs):
            values = reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids_list,
                                 **reward_kwargs)
            rewards_per_func[:, i] = torch.tensor([torch.nan if v is None else v for v in values])
        return self.utils.gather(rewards_per_func)

    def _generate_and_score_completions(self, inputs):
        import torch
        mode = "train" if self.model.training else "eval"
        prompts = [x["prompt"] for x in inputs]
        prompt_ids, completion_ids, tool_mask, completions, logprobs, extra_fields = self._generate(prompts)
        for ids in prompt_ids + completion_ids:  # torch.tensor(ids) over token ids (2373-2395)
            torch.tensor(ids, dtype=torch.long)
        if self.use_vllm and self.vllm_importance_sampling_correction:  # 2576-2590: old - sampling log-probs
            old = [[-0.25] * len(ids) for ids in completion_ids]
            if logprobs is None:
                raise TypeError("unsupported operand type(s) for -: 'Tensor' and 'NoneType'")
            ratio = [[math.exp(o - s) for o, s in zip(old_row, row)] for old_row, row in zip(old, logprobs)]
            self.importance_sampling_ratio = ratio
        for i, inp in enumerate(inputs):
            for key, values in extra_fields.items():
                if isinstance(values, list) and i < len(values):
                    inp[key] = values[i]
                elif not isinstance(values, list):
                    inp[key] = values
        rewards_per_func = self._calculate_rewards(inputs, prompts, completions, completion_ids)
        unscorable = torch.isnan(rewards_per_func).all(dim=1)
        rewards = (rewards_per_func * self.reward_weights.unsqueeze(0)).nansum(dim=1)
        rewards[unscorable] = torch.nan
        grouped = rewards.view(-1, self.num_generations)
        mean = torch.nanmean(grouped, dim=1).repeat_interleave(self.num_generations)
        std = nanstd(grouped).repeat_interleave(self.num_generations)
        advantages = torch.nan_to_num((rewards - mean) / (std + 1e-4), nan=0.0)
        process_slice = slice(self.accelerator.process_index * len(prompts),
                              (self.accelerator.process_index + 1) * len(prompts))
        all_process_advantages = advantages.clone()
        advantages = advantages[process_slice]
        self._metrics[mode]["reward"].append(torch.nanmean(rewards).item())
        self._logs["advantages"].extend(all_process_advantages.tolist())
        for name in sorted(self._pending_metrics):
            values = self._pending_metrics[name]
            local = torch.tensor(sum(values) / len(values))
            self._metrics[mode][name].append(self.utils.gather(local.unsqueeze(0)).mean().item())
        self._pending_metrics.clear()
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "tool_mask": tool_mask,
                "advantages": advantages, "sampling_logprobs": logprobs}


def grpo_args(**overrides):
    """GRPOConfig's fields the model reads (grpo_config.py), with its defaults where they matter."""
    fields = dict(num_generations=4, max_completion_length=4096, temperature=1.0, top_p=1.0, top_k=0, min_p=None,
                  repetition_penalty=1.0, generation_kwargs=None, use_vllm=False, vllm_mode="server",
                  vllm_server_base_url=None, vllm_server_host="0.0.0.0", vllm_server_port=8000,
                  vllm_importance_sampling_correction=True, chat_template_kwargs=None)
    fields.update(overrides)
    return types.SimpleNamespace(**fields)


# ---- the ranks -----------------------------------------------------------------------------------------

def _rank_main(rank, collective, scenario, connection):
    """One training process: build the trainer the scenario names (a function `scenario["build"]` in an
    importable module: the scenario is plain data), then its step."""
    try:
        collective.rank = rank
        utils = install_accelerate(collective)
        module_name, function = scenario["build"].split(":")
        __import__(module_name)
        build = getattr(sys.modules[module_name], function)
        accelerator = types.SimpleNamespace(process_index=rank, num_processes=collective.world,
                                            is_main_process=rank == 0, device="cpu",
                                            wait_for_everyone=lambda: collective.exchange(None) and None)
        result = build(rank, accelerator, utils, scenario)
        connection.send(("ok", result))
    except BaseException:  # noqa: BLE001 - reported by the test
        connection.send(("error", traceback.format_exc()))
        try:
            collective.barrier.abort()
        except Exception:  # noqa: BLE001
            pass


def run_ranks(scenario, world=2, timeout=120):
    """Runs `scenario` in `world` training processes; returns each rank's result, or raises with the first
    rank's traceback. The processes are forked from this one (accelerate starts fresh interpreters; what
    matters here is that each rank has its own memory and meets the others only through collectives, which
    a forked process keeps, without each one importing torch again)."""
    import multiprocessing
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager:
        collective = Collective(manager, world, timeout=scenario.get("collective_timeout", 60.0))
        pipes = [context.Pipe() for _ in range(world)]
        processes = [context.Process(target=_rank_main, args=(rank, collective, scenario, pipes[rank][1]))
                     for rank in range(world)]
        for process in processes:
            process.start()
        results, errors = [None] * world, []
        deadline = time.monotonic() + timeout
        for rank, (parent, _) in enumerate(pipes):
            if not parent.poll(max(0.0, deadline - time.monotonic())):
                errors.append(f"rank {rank} gave no answer within {timeout} s")
                continue
            status, value = parent.recv()
            (results.__setitem__(rank, value) if status == "ok" else errors.append(value))
        for process in processes:
            process.join(10)
            if process.is_alive():
                process.kill()
        if errors:
            raise RuntimeError("\n".join(errors))
        return results


def run_in_event_loop(function, *args):
    """Calls function(*args) from inside a running event loop (a notebook's)."""
    async def main():
        return function(*args)
    return asyncio.run(main())


os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
