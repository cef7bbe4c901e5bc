#!/usr/bin/env bash
# The GPU device check (docs/TESTING.md, "The GPU device check"): one command for a GPU machine
# without network, under 8 minutes, one summary file.
#   tests/gpu/device_check.sh [--summary PATH] BUNDLE
# BUNDLE: the release tarball (profsh-*.tar.gz), the folder it unpacks to (holding bin/profsh),
# or a build tree's profsh (build/profsh). The summary goes to PATH, else $OUT/device_check_summary.txt
# when $OUT is set, else ./device_check_summary.txt; the logs and traces beside it, in
# SUMMARY_BASE_files/, also packed as SUMMARY_BASE_files.tar.gz. Each check ends PASS, FAIL,
# COULD NOT RUN (with why) or NOT IN BUILD.
# Exit status: 0 all passed; 1 a check failed; 3 nothing failed but a check could not run (no GPU
# here, say); 2 bad usage or BUNDLE.
# Environment: DEVICE_CHECK_PYTHON (default python3 on PATH), DEVICE_CHECK_BUDGET_S (default
# 470: every step's timeout is cut to what is left of it), DEVICE_CHECK_TORCH_DEVICE=cpu (runs the
# torch checks on the CPU, operators only: how this script's own test exercises them without a GPU).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
START=$(date +%s)
BUDGET=${DEVICE_CHECK_BUDGET_S:-470}
TORCH_DEVICE=${DEVICE_CHECK_TORCH_DEVICE:-cuda}
LOOP_RANGE=device_check_loop

usage() { echo "usage: $0 [--summary PATH] BUNDLE   (BUNDLE: profsh-*.tar.gz, its folder, or build/profsh)" >&2; exit 2; }

SUMMARY=""
while [ $# -gt 0 ]; do
  case $1 in
    --summary) [ $# -ge 2 ] || usage; SUMMARY=$2; shift 2 ;;
    --summary=*) SUMMARY=${1#--summary=}; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "device_check.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || usage
case $TORCH_DEVICE in cuda|cpu) ;; *) echo "device_check.sh: DEVICE_CHECK_TORCH_DEVICE must be cuda or cpu" >&2; exit 2 ;; esac

if [ -z "$SUMMARY" ]; then
  if [ -n "${OUT:-}" ]; then SUMMARY=$OUT/device_check_summary.txt; else SUMMARY=$PWD/device_check_summary.txt; fi
fi
case $SUMMARY in /*) ;; *) SUMMARY=$PWD/$SUMMARY ;; esac
FILES=${SUMMARY%.txt}_files
rm -rf "$FILES" && mkdir -p "$FILES" || { echo "device_check.sh: cannot make $FILES" >&2; exit 2; }
: > "$SUMMARY" || { echo "device_check.sh: cannot write $SUMMARY" >&2; exit 2; }

# --- profsh from BUNDLE -------------------------------------------------------------------------
BUNDLE=$1
case $BUNDLE in /*) ;; *) BUNDLE=$PWD/$BUNDLE ;; esac
PROFSH=""
if [ -f "$BUNDLE" ] && case $BUNDLE in *.tar.gz|*.tgz) true ;; *) false ;; esac; then
  mkdir -p "$FILES/bundle"
  tar -xzf "$BUNDLE" -C "$FILES/bundle" || { echo "device_check.sh: cannot unpack $BUNDLE" >&2; exit 2; }
  PROFSH=$(find "$FILES/bundle" -maxdepth 3 -path '*/bin/profsh' -type f | head -n 1)
elif [ -d "$BUNDLE" ]; then
  for p in "$BUNDLE/bin/profsh" "$BUNDLE/profsh"; do [ -f "$p" ] && { PROFSH=$p; break; }; done
elif [ -f "$BUNDLE" ]; then
  PROFSH=$BUNDLE
fi
if [ -z "$PROFSH" ] || [ ! -x "$PROFSH" ]; then
  echo "device_check.sh: no executable profsh in $BUNDLE (want a profsh-*.tar.gz, a folder with bin/profsh, or build/profsh)" >&2
  exit 2
fi
PROFSH=$(cd "$(dirname "$PROFSH")" && pwd -P)/$(basename "$PROFSH")

PYTHON=$(command -v "${DEVICE_CHECK_PYTHON:-python3}" || true)
NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
cd "$FILES" || exit 2

# --- reporting ----------------------------------------------------------------------------------
PASSED=0 FAILED=0 NOT_RUN=0 NOT_BUILT=0
say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
# result STATUS NAME DETAIL: STATUS is PASS, FAIL, "COULD NOT RUN" or "NOT IN BUILD".
result() {
  case $1 in
    PASS) PASSED=$((PASSED + 1)) ;;
    FAIL) FAILED=$((FAILED + 1)) ;;
    "COULD NOT RUN") NOT_RUN=$((NOT_RUN + 1)) ;;
    "NOT IN BUILD") NOT_BUILT=$((NOT_BUILT + 1)) ;;
  esac
  say "$(printf '%-13s %s: %s' "$1" "$2" "$3")"
}
detail() { sed 's/^/    /' | tee -a "$SUMMARY"; }
# Relays compare_runs.py's PASS/FAIL lines as results and its indented lines as details.
relay() {
  local line
  while IFS= read -r line; do
    case $line in
      "PASS "*|"FAIL "*) local rest=${line#* }; result "${line%% *}" "${rest%%: *}" "${rest#*: }" ;;
      *) printf '    %s\n' "${line#    }" | tee -a "$SUMMARY" ;;
    esac
  done
}
elapsed() { echo $(( $(date +%s) - START )); }
# timeout_for WANTED: WANTED seconds (for the default budget; scaled with a larger or smaller
# one), or what is left of the budget (0 when under 10 s).
timeout_for() {
  local left=$(( BUDGET - $(elapsed) - 5 )) want=$(( $1 * BUDGET / 470 ))
  [ "$left" -lt 10 ] && { echo 0; return; }
  [ "$want" -lt "$left" ] && echo "$want" || echo "$left"
}
# ended STATUS SECONDS: how a step ended, for a FAIL line.
ended() { [ "$1" -eq 124 ] && echo "timed out after $2 s" || echo "exited $1"; }
# run_step SECONDS LOG CMD...: CMD with its output in LOG; status 124 when it ran out of time.
run_step() {
  local t=$1 log=$2; shift 2
  timeout --kill-after=5 "$t" "$@" > "$log" 2>&1
  local rc=$?
  [ $rc -eq 137 ] && rc=124
  return $rc
}
# The `profsh: N processes...` line of a profsh run's output, where its operator source is named.
run_summary() { grep -E '^profsh: .*(process|window)' "$1" | tail -n 1; }

# --- versions -----------------------------------------------------------------------------------
say "profsh device check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n), $(uname -sr)"
say "script: $HERE/device_check.sh; summary: $SUMMARY; logs and traces: $FILES"
say "profsh: $PROFSH: $("$PROFSH" --version 2>&1 | head -n 1)"
"$PROFSH" --version 2>&1 | tail -n +2 | head -n 12 | detail
if command -v nvidia-smi > /dev/null; then
  say "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 4 | tr '\n' ';')"
else
  say "nvidia-smi: not on PATH"
fi
say "nvcc: ${NVCC:-not found}${NVCC:+: $("$NVCC" --version 2>&1 | grep -i release | head -n 1)}"
say "c++ compiler: $( (command -v c++ || command -v g++ || echo none) | head -n 1)"
TORCH_INFO=""
if [ -n "$PYTHON" ]; then
  TORCH_INFO=$(timeout 60 "$PYTHON" -c '
import torch
cuda = torch.cuda.is_available()
print(torch.__version__, torch.version.cuda or "none", int(cuda),
      torch.cuda.get_device_name(0).replace(" ", "_") if cuda else "-")' 2>"$FILES/torch_probe.log" | tail -n 1)
  say "python: $PYTHON ($("$PYTHON" --version 2>&1)); torch: ${TORCH_INFO:-cannot import torch ($(tail -n 1 "$FILES/torch_probe.log"))}"
else
  say "python: ${DEVICE_CHECK_PYTHON:-python3} not found"
fi
say "torch device for the torch checks: $TORCH_DEVICE; time budget: ${BUDGET} s"
say ""

# --- why GPU checks cannot run here -------------------------------------------------------------
NO_GPU=""
if ! command -v nvidia-smi > /dev/null; then
  NO_GPU="no nvidia-smi on PATH (no NVIDIA driver here)"
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  NO_GPU="nvidia-smi lists no CUDA device ($(nvidia-smi -L 2>&1 | head -n 1))"
elif [ ! -e /dev/nvidia0 ]; then
  NO_GPU="no /dev/nvidia0"
fi
NO_TORCH=""
read -r TORCH_VERSION TORCH_CUDA TORCH_HAS_CUDA _ <<< "${TORCH_INFO:-- - 0 -}"
if [ "$TORCH_DEVICE" = cuda ] && [ -n "$NO_GPU" ]; then
  NO_TORCH=$NO_GPU
elif [ -z "$PYTHON" ]; then
  NO_TORCH="no ${DEVICE_CHECK_PYTHON:-python3} on PATH"
elif [ -z "$TORCH_INFO" ]; then
  NO_TORCH="$PYTHON cannot import torch"
elif [ "${TORCH_VERSION%%.*}" -lt 2 ] 2>/dev/null; then
  NO_TORCH="torch $TORCH_VERSION is not 2.x"
elif [ "$TORCH_DEVICE" = cuda ] && [ "$TORCH_HAS_CUDA" != 1 ]; then
  NO_TORCH="torch $TORCH_VERSION (CUDA $TORCH_CUDA) sees no CUDA device"
fi
# profsh reads CUPTI 13 only; a torch built for another CUDA loads its own CUPTI first (README,
# "CUDA activity"), and then profsh records no GPU activity by design.
NO_CUPTI=""
if [ "$TORCH_DEVICE" = cpu ]; then
  NO_CUPTI="DEVICE_CHECK_TORCH_DEVICE=cpu: no GPU work"
elif [ -z "$NO_TORCH" ] && [ "${TORCH_CUDA%%.*}" != 13 ]; then
  NO_CUPTI="torch $TORCH_VERSION is built for CUDA $TORCH_CUDA and brings that CUPTI; profsh reads CUPTI 13 only"
fi

# --- 1. the comparison logic itself -------------------------------------------------------------
if [ -z "$PYTHON" ]; then
  result "COULD NOT RUN" "comparison logic self-test" "no ${DEVICE_CHECK_PYTHON:-python3} on PATH"
elif run_step "$(timeout_for 60)" "$FILES/self_test.log" "$PYTHON" "$HERE/test_compare_runs.py"; then
  result PASS "comparison logic self-test" "$(grep -E '^Ran [0-9]+ tests' "$FILES/self_test.log")"
else
  result FAIL "comparison logic self-test" "see $FILES/self_test.log"
  tail -n 15 "$FILES/self_test.log" | detail
fi

# --- 2. the CUDA programs of tests/gpu ----------------------------------------------------------
NAME="CUDA programs (tests/gpu/*.cu under profsh run --activities nvtx,cuda, expected counts)"
if [ -n "$NO_GPU" ]; then
  result "COULD NOT RUN" "$NAME" "$NO_GPU"
elif [ -z "$NVCC" ]; then
  result "COULD NOT RUN" "$NAME" "no nvcc on PATH or in /usr/local/cuda/bin"
elif [ -z "$PYTHON" ]; then
  result "COULD NOT RUN" "$NAME" "no python3"
else
  T=$(timeout_for 120)
  run_step "$T" "$FILES/cuda_programs.log" env TMPDIR="$FILES" "$PYTHON" "$HERE/check_gpu.py" "$PROFSH" "$NVCC" "$HERE"
  case $? in
    0) result PASS "$NAME" "$(grep -c '^ok ' "$FILES/cuda_programs.log") checks" ;;
    77) result "COULD NOT RUN" "$NAME" "$(tail -n 1 "$FILES/cuda_programs.log")" ;;
    124) result FAIL "$NAME" "timed out after $T s (log: $FILES/cuda_programs.log)" ;;
    *) result FAIL "$NAME" "log: $FILES/cuda_programs.log"; { grep '^FAIL' "$FILES/cuda_programs.log" || tail -n 10 "$FILES/cuda_programs.log"; } | detail ;;
  esac
fi

# --- 3. the training loop: bare, under torch.profiler, under profsh -----------------------------
PAIR_NAMES=("operator counts per name" "kernel counts per name" "CUDA runtime calls per name"
            "kernels inside their launching operators (profsh)" "CUDA time per operator within 2 %")
# Named once: the checks below refer to these, not to positions in TORCH_NAMES.
ADDED_TIME_NAME="added time per kernel launch (none vs torch.profiler vs profsh)"
SCHEDULE_NAME="schedule windows (profsh run --schedule)"
ON_DEMAND_NAME="on-demand window (profsh trace --pid)"
TORCH_NAMES=("operator source for this torch" "${PAIR_NAMES[@]}" "$ADDED_TIME_NAME" "$SCHEDULE_NAME"
             "$ON_DEMAND_NAME")
[ "$TORCH_DEVICE" = cpu ] && ACTIVITIES=torch || ACTIVITIES=torch,cuda
LOOP=("$PYTHON" "$HERE/train_loop.py" --device "$TORCH_DEVICE")
torch_could_not_run() {  # every torch check from index $1 on, with reason $2
  local i
  for ((i = $1; i < ${#TORCH_NAMES[@]}; i++)); do result "COULD NOT RUN" "${TORCH_NAMES[$i]}" "$2"; done
}

torch_checks() {
  [ -n "$NO_TORCH" ] && { torch_could_not_run 0 "$NO_TORCH"; return; }
  # The operator source is built for this torch at first use (minutes at most); one small run
  # does it before anything is timed.
  local t
  t=$(timeout_for 200)
  [ "$t" -eq 0 ] && { torch_could_not_run 0 "out of time"; return; }
  run_step "$t" "$FILES/operator_source.log" "$PROFSH" run --activities torch --no-table \
    -o "$FILES/operator_source.json" -- "$PYTHON" -c "import torch; torch.ones(2).add_(1)"
  local rc=$? line
  line=$(run_summary "$FILES/operator_source.log")
  if [ $rc -eq 124 ]; then
    torch_could_not_run 0 "profsh run of 'import torch' timed out after $t s (building the operator source?)"
    return
  elif [ $rc -ne 0 ]; then
    result FAIL "${TORCH_NAMES[0]}" "profsh run of 'import torch' $(ended $rc $t) (log: $FILES/operator_source.log)"
    tail -n 10 "$FILES/operator_source.log" | detail
    torch_could_not_run 1 "profsh cannot run torch here"
    return
  fi
  case $line in
    *"operators: profsh operator source"*) result PASS "${TORCH_NAMES[0]}" "${line#*operators: }" ;;
    *)
      # torch.profiler runs in the workload instead: comparing it with torch.profiler tests nothing.
      torch_could_not_run 0 "profsh's operator source did not load, so it would compare torch.profiler with itself: ${line#*operators: }"
      return ;;
  esac

  t=$(timeout_for 60)
  run_step "$t" "$FILES/none.log" "${LOOP[@]}" --mode none --timings "$FILES/none_timings.json"
  local none_rc=$? none_t=$t
  t=$(timeout_for 90)
  run_step "$t" "$FILES/kineto.log" "${LOOP[@]}" --mode kineto --trace "$FILES/kineto.json" --timings "$FILES/kineto_timings.json"
  local kineto_rc=$? kineto_t=$t
  t=$(timeout_for 90)
  run_step "$t" "$FILES/profsh_run.log" "$PROFSH" run --activities "$ACTIVITIES" --record-shapes --no-table \
    -o "$FILES/profsh_run.json" -- "${LOOP[@]}" --mode profsh --timings "$FILES/profsh_timings.json"
  local profsh_rc=$? profsh_t=$t
  say "    profsh run: $(run_summary "$FILES/profsh_run.log")"
  grep -i -E 'cupti|cuda' "$FILES/profsh_run.log" | grep '^profsh' | head -n 5 | detail

  local why=""
  [ $kineto_rc -ne 0 ] && why="the loop under torch.profiler $(ended $kineto_rc $kineto_t) (log: $FILES/kineto.log)"
  [ $profsh_rc -ne 0 ] && why="${why:+$why; }the loop under profsh run $(ended $profsh_rc $profsh_t) (log: $FILES/profsh_run.log)"
  # Without CUPTI 13 (or on the CPU) only the operators are compared.
  local checks=operators,kernels,calls,launch-windows,cuda-time compared=("${PAIR_NAMES[@]}")
  if [ -n "$NO_CUPTI" ]; then
    checks=operators compared=("${PAIR_NAMES[0]}")
  fi
  if [ -n "$why" ]; then
    for n in "${compared[@]}"; do result FAIL "$n" "$why"; done
  else
    "$PYTHON" "$HERE/compare_runs.py" pair "$FILES/profsh_run.json" "$FILES/kineto.json" \
      --loop-range "$LOOP_RANGE" --checks "$checks" > "$FILES/compare.log" 2>&1
    if [ $? -eq 2 ]; then
      for n in "${compared[@]}"; do result FAIL "$n" "$(tail -n 1 "$FILES/compare.log")"; done
    else
      relay < "$FILES/compare.log"
    fi
  fi
  [ -n "$NO_CUPTI" ] && for n in "${PAIR_NAMES[@]:1}"; do result "COULD NOT RUN" "$n" "$NO_CUPTI"; done

  local name=$ADDED_TIME_NAME
  [ "$TORCH_DEVICE" = cpu ] && name="added time per operator (none vs torch.profiler vs profsh)"
  if [ $none_rc -ne 0 ]; then
    result FAIL "$name" "the bare loop $(ended $none_rc $none_t) (log: $FILES/none.log)"
  elif [ -n "$why" ]; then
    result FAIL "$name" "$why"
  elif "$PYTHON" "$HERE/compare_runs.py" overhead --launches-from "$FILES/kineto.json" --loop-range "$LOOP_RANGE" \
      "$FILES/none_timings.json" "$FILES/kineto_timings.json" "$FILES/profsh_timings.json" > "$FILES/overhead.log" 2>&1; then
    result PASS "$name" "measured over the same 30 steps (median step times)"
    detail < "$FILES/overhead.log"
  else
    result FAIL "$name" "$(tail -n 1 "$FILES/overhead.log")"
  fi

  local kernels=--kernels
  [ -n "$NO_CUPTI" ] && kernels=""
  # Schedule: wait 1, warm-up 1, active 2, twice: steps 2-3 and 6-7, each window checked
  # against the same steps of the whole run above.
  name=$SCHEDULE_NAME
  t=$(timeout_for 90)
  if [ $profsh_rc -ne 0 ]; then
    result "COULD NOT RUN" "$name" "no whole run of the loop under profsh to compare with"
  elif [ "$t" -eq 0 ]; then
    result "COULD NOT RUN" "$name" "out of time"
  else
    run_step "$t" "$FILES/schedule.log" "$PROFSH" run --activities "$ACTIVITIES" --no-table \
      --schedule wait=1,warmup=1,active=2,repeat=2 -o "$FILES/schedule.json" -- "${LOOP[@]}" --mode profsh --steps 10
    rc=$?
    local windows=("$FILES"/schedule.*.json)
    if [ $rc -ne 0 ]; then
      result FAIL "$name" "profsh run --schedule $(ended $rc $t) (log: $FILES/schedule.log)"; tail -n 5 "$FILES/schedule.log" | detail
    elif [ ${#windows[@]} -ne 2 ] || [ ! -f "${windows[0]}" ]; then
      result FAIL "$name" "$(ls "$FILES"/schedule.*.json 2>/dev/null | wc -l) windows saved (want 2; log: $FILES/schedule.log)"
    else
      "$PYTHON" "$HERE/compare_runs.py" windows "$FILES/profsh_run.json" --steps 2 $kernels "${windows[@]}" > "$FILES/schedule_compare.log" 2>&1
      rc=$?
      if [ $rc -eq 0 ]; then result PASS "$name" "2 windows of 2 steps, as the same steps of the whole run"; else result FAIL "$name" "windows differ from the same steps of the whole run"; fi
      detail < "$FILES/schedule_compare.log"
    fi
  fi

  # On demand: `profsh trace --pid` asks a running loop for its next 3 steps.
  name=$ON_DEMAND_NAME
  t=$(timeout_for 90)
  if [ $profsh_rc -ne 0 ]; then
    result "COULD NOT RUN" "$name" "no whole run of the loop under profsh to compare with"
  elif [ "$t" -lt 45 ]; then
    result "COULD NOT RUN" "$name" "out of time"
  else
    on_demand "$name" "$t" "$kernels"
  fi
}

on_demand() {
  local name=$1 t=$2 kernels=$3 pid="" i rc
  rm -f "$FILES/on_demand.pid" "$FILES/on_demand.stop"
  timeout --kill-after=5 "$t" "$PROFSH" run --activities "$ACTIVITIES" --no-table --on-demand -- \
    "${LOOP[@]}" --mode profsh --pid-file "$FILES/on_demand.pid" --until-file "$FILES/on_demand.stop" \
    --max-seconds $((t - 10)) > "$FILES/on_demand_run.log" 2>&1 &
  local run=$!
  # Whatever happens, the run's timeout t bounds this check: the pid waits at most t - 35 s and
  # the trace request 30 s more.
  for ((i = 0; i < (t - 35) * 5; i++)); do
    [ -s "$FILES/on_demand.pid" ] && { pid=$(cat "$FILES/on_demand.pid"); break; }
    kill -0 $run 2>/dev/null || break
    sleep 0.2
  done
  if [ -z "$pid" ]; then
    touch "$FILES/on_demand.stop"; wait $run
    result FAIL "$name" "the loop under profsh run --on-demand never started its steps (log: $FILES/on_demand_run.log)"
    tail -n 5 "$FILES/on_demand_run.log" | detail
    return
  fi
  run_step 30 "$FILES/on_demand_trace.log" "$PROFSH" trace --pid "$pid" --steps 3 --timeout 25 --no-table -o "$FILES/on_demand.json"
  rc=$?
  touch "$FILES/on_demand.stop"
  wait $run
  local run_rc=$?
  if [ $rc -ne 0 ] || [ ! -f "$FILES/on_demand.json" ]; then
    result FAIL "$name" "profsh trace --pid $pid --steps 3 $(ended $rc 30) (log: $FILES/on_demand_trace.log)"
    tail -n 5 "$FILES/on_demand_trace.log" | detail
  elif [ $run_rc -ne 0 ]; then
    result FAIL "$name" "profsh run --on-demand $(ended $run_rc $t) (log: $FILES/on_demand_run.log)"
    tail -n 5 "$FILES/on_demand_run.log" | detail
  elif "$PYTHON" "$HERE/compare_runs.py" windows "$FILES/profsh_run.json" --steps 3 $kernels "$FILES/on_demand.json" > "$FILES/on_demand_compare.log" 2>&1; then
    result PASS "$name" "3 steps, as steps of the whole run"
    detail < "$FILES/on_demand_compare.log"
  else
    result FAIL "$name" "the window differs from the whole run's steps"
    detail < "$FILES/on_demand_compare.log"
  fi
}

torch_checks

# --- 4. the flight recorder (issue 30) ----------------------------------------------------------
# Every step recorded, a trigger at step 7 (a Lua expression that also reads the step's GPU busy
# time): the dump must hold steps 2-9 (before 5, after 2), as the same steps of the whole run,
# and name the GPU work the step's summary saw.
flight_check() {
  local name="flight recorder with CUDA" t rc kernels=--kernels
  [ -n "$NO_CUPTI" ] && kernels=""
  if ! "$PROFSH" run --help 2>&1 | grep -q -- '--flight-recorder'; then
    result "NOT IN BUILD" "$name" "not available in this build (profsh run --help has no --flight-recorder)"
    return
  fi
  if [ ! -s "$FILES/profsh_run.json" ]; then
    result "COULD NOT RUN" "$name" "no whole run of the loop under profsh to compare with"
    return
  fi
  t=$(timeout_for 90)
  if [ "$t" -lt 30 ]; then result "COULD NOT RUN" "$name" "out of time"; return; fi
  rm -f "$FILES"/flight.*.json
  run_step "$t" "$FILES/flight.log" "$PROFSH" run --activities "$ACTIVITIES" --no-table \
    --flight-recorder 10 -o "$FILES/flight.json" \
    --trigger 'step.step == 7 and (step.gpu_busy > 0 and "step 7, GPU busy" or "step 7, no GPU work")' \
    -- "${LOOP[@]}" --mode profsh --steps 10
  rc=$?
  local dumps=("$FILES"/flight.*.json) want="step 7, GPU busy"
  [ "$ACTIVITIES" = torch ] || [ -z "$kernels" ] && want="step 7, "
  if [ $rc -ne 0 ]; then
    result FAIL "$name" "profsh run --flight-recorder $(ended $rc $t) (log: $FILES/flight.log)"; tail -n 5 "$FILES/flight.log" | detail
  elif [ ${#dumps[@]} -ne 1 ] || [ ! -f "${dumps[0]}" ]; then
    result FAIL "$name" "$(ls "$FILES"/flight.*.json 2>/dev/null | wc -l) dumps saved (want 1; log: $FILES/flight.log)"
  elif ! grep -q "(steps 2-9): $want" "$FILES/flight.log"; then
    result FAIL "$name" "the dump is not steps 2-9 with the reason '$want...' (log: $FILES/flight.log)"; grep '^== flight' "$FILES/flight.log" | detail
  else
    "$PYTHON" "$HERE/compare_runs.py" windows "$FILES/profsh_run.json" --steps 8 $kernels "${dumps[0]}" > "$FILES/flight_compare.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then result PASS "$name" "steps 2-9 around the trigger, as the same steps of the whole run"; else result FAIL "$name" "the dump differs from the same steps of the whole run"; fi
    detail < "$FILES/flight_compare.log"
  fi
}
flight_check

# Dumps on demand and the watchdog: the training loop under --flight-recorder 5 with the watchdog on (it must stay quiet: the loop
# never hangs); `profsh trace --pid PID --dump` asks for its ring while it runs. The dump must
# hold the last steps' ProfilerStep ranges and operators and, with CUPTI, their kernels.
flight_recorder_check() {
  local name="flight recorder dump on demand and watchdog" pid="" i rc t
  t=$(timeout_for 90)
  if [ -n "$NO_TORCH" ]; then
    result "COULD NOT RUN" "$name" "$NO_TORCH"; return
  elif [ "$t" -lt 45 ]; then
    result "COULD NOT RUN" "$name" "out of time"; return
  fi
  rm -f "$FILES/flight.pid" "$FILES/flight.stop" "$FILES"/flight.*.json
  timeout --kill-after=5 "$t" "$PROFSH" run --activities "$ACTIVITIES" --no-table --flight-recorder 5 \
    --watchdog 20 -o "$FILES/flight.json" -- "${LOOP[@]}" --mode profsh --pid-file "$FILES/flight.pid" \
    --until-file "$FILES/flight.stop" --max-seconds $((t - 10)) > "$FILES/flight_run.log" 2>&1 &
  local run=$!
  for ((i = 0; i < (t - 35) * 5; i++)); do
    [ -s "$FILES/flight.pid" ] && { pid=$(cat "$FILES/flight.pid"); break; }
    kill -0 $run 2>/dev/null || break
    sleep 0.2
  done
  if [ -z "$pid" ]; then
    touch "$FILES/flight.stop"; wait $run
    result FAIL "$name" "the loop under profsh run --flight-recorder never started its steps (log: $FILES/flight_run.log)"
    tail -n 5 "$FILES/flight_run.log" | detail
    return
  fi
  sleep 3  # steps into the ring
  run_step 30 "$FILES/flight_dump.log" "$PROFSH" trace --pid "$pid" --dump --timeout 25
  rc=$?
  touch "$FILES/flight.stop"
  wait $run
  local run_rc=$?
  local dump
  dump=$(grep -m 1 '\.json$' "$FILES/flight_dump.log")
  if [ $rc -ne 0 ] || [ -z "$dump" ] || [ ! -f "$dump" ]; then
    result FAIL "$name" "profsh trace --pid $pid --dump $(ended $rc 30) (log: $FILES/flight_dump.log)"
    tail -n 5 "$FILES/flight_dump.log" | detail
    return
  elif [ $run_rc -ne 0 ]; then
    result FAIL "$name" "profsh run --flight-recorder $(ended $run_rc $t) (log: $FILES/flight_run.log)"
    tail -n 5 "$FILES/flight_run.log" | detail
    return
  elif grep -q 'watchdog' "$FILES/flight_run.log"; then
    result FAIL "$name" "the watchdog fired on a loop that never hangs (log: $FILES/flight_run.log)"
    return
  fi
  local counts
  counts=$("$PYTHON" -c '
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
steps = {e["name"] for e in events if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")}
ops = sum(1 for e in events if e.get("cat") == "cpu_op")
kernels = sum(1 for e in events if e.get("cat") == "kernel")
print(len(steps), ops, kernels)' "$dump" 2>>"$FILES/flight_dump.log")
  read -r steps ops kernels <<< "${counts:-0 0 0}"
  if [ "${steps:-0}" -lt 1 ] || [ "${ops:-0}" -lt 1 ]; then
    result FAIL "$name" "the dump $dump holds ${steps:-0} steps and ${ops:-0} operators"
  elif [ -z "$NO_CUPTI" ] && [ "${kernels:-0}" -lt 1 ]; then
    result FAIL "$name" "the dump $dump holds $steps steps, $ops operators but no kernel"
  else
    result PASS "$name" "a dump on demand of $steps steps: $ops operators, $kernels kernels${NO_CUPTI:+ ($NO_CUPTI)}; the watchdog stayed quiet"
  fi
}
if "$PROFSH" run --help 2>&1 | grep -q -- '--watchdog'; then
  flight_recorder_check
else
  result "NOT IN BUILD" "flight recorder dump on demand and watchdog" "not available in this build (profsh run --help has no --watchdog)"
fi

# --- summary ------------------------------------------------------------------------------------
say ""
say "totals: $PASSED PASS, $FAILED FAIL, $NOT_RUN COULD NOT RUN, $NOT_BUILT NOT IN BUILD, in $(elapsed) s"
if [ $FAILED -gt 0 ]; then STATUS=1 WHY="a check failed"
elif [ $NOT_RUN -gt 0 ]; then STATUS=3 WHY="nothing failed, but some checks could not run"
else STATUS=0 WHY="every check that this build has passed"; fi
say "exit status $STATUS: $WHY"
# The logs and traces in one file too: a machine that hands back only a few files (the GPU
# lender's $OUT returns eight) still returns them all.
tar -czf "$FILES.tar.gz" -C "$(dirname "$FILES")" --exclude "$(basename "$FILES")/bundle" "$(basename "$FILES")" 2>/dev/null \
  && echo "logs and traces: $FILES.tar.gz"
echo "summary: $SUMMARY"
exit $STATUS
