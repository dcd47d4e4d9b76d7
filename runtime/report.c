/* `streaminfer plan`: the plan as a table, one row per step. */
#include <stdio.h>
#include <string.h>
#include "runtime.h"

static const char *mib(uint64_t b, char *buf)
{
    snprintf(buf, 24, "%.2f", b / 1048576.0);
    return buf;
}

si_result si_report_plan(const si_model *m, FILE *f, si_error *err)
{
    const pg_plan *pl = si_model_plan(m);
    const core_program *p = si_model_program(m);
    const pg_problem *pb = si_model_problem(m);
    if (!pl || !p) {
        if (err) {
            err->status = SI_ERR_ARG;
            snprintf(err->message, sizeof err->message,
                     "no plan yet: the model's input shapes are not known until it runs");
        }
        return SI_ERR_ARG;
    }
    char a[24], b[24], c[24], d[24];
    si_stats stt = *si_model_stats(m);
    fprintf(f, "for %s", si_model_renderer(m));
    if (si_model_driver_reserve(m))
        fprintf(f, "; of the budget, %s MiB are left to the driver (host pool page tables, page "
                   "rounding)", mib(si_model_driver_reserve(m), a));
    fprintf(f, "\n");
    fprintf(f, "budget %s%s, arena (peak GPU bytes) %s MiB, lower bound %s MiB (step %d), "
               "resident between runs %s MiB\n",
            stt.budget_bytes ? mib(stt.budget_bytes, a) : "none", stt.budget_bytes ? " MiB" : "",
            mib(pl->arena_bytes, b),
            mib(pl->lower_bound, c), pl->lower_bound_step, mib(pl->resident_bytes, d));
    fprintf(f, "per run: %d steps in %llu segments, uploaded %s MiB, spilled %s MiB, reloaded %s "
               "MiB, %llu evictions\n",
            p->n_steps, (unsigned long long)pl->segments, mib(pl->bytes_uploaded, a),
            mib(pl->bytes_spilled, b), mib(pl->bytes_reloaded, c),
            (unsigned long long)pl->evictions);
    if (stt.steps_split && stt.tile_limit_max_bytes > stt.tile_limit_bytes)
        fprintf(f, "tiling: %llu steps split into parts of at most %s MiB where the budget binds, "
                   "%s MiB elsewhere (largest step untiled %s MiB)\n", (unsigned long long)stt.steps_split,
                mib(stt.tile_limit_bytes, a), mib(stt.tile_limit_max_bytes, c), mib(stt.untiled_bound_bytes, b));
    else if (stt.steps_split && stt.tile_limit_bytes)
        fprintf(f, "tiling: %llu steps split into parts of at most %s MiB (largest step untiled "
                   "%s MiB)\n", (unsigned long long)stt.steps_split, mib(stt.tile_limit_bytes, a),
                mib(stt.untiled_bound_bytes, b));
    else if (stt.steps_split) /* split for the device's limit only */
        fprintf(f, "tiling: %llu steps split so that no buffer is over max_buffer_bytes (largest "
                   "step untiled %s MiB)\n", (unsigned long long)stt.steps_split,
                mib(stt.untiled_bound_bytes, b));
    fprintf(f, "limits: max_buffer_bytes %llu (one buffer a step binds; GPU storage block %llu, "
               "%llu elements a dispatch, %llu by 32-bit indices); largest buffer %llu\n",
            (unsigned long long)stt.max_buffer_bytes, (unsigned long long)stt.storage_block_bytes,
            (unsigned long long)stt.max_dispatch_elements, (unsigned long long)stt.max_index_elements,
            (unsigned long long)stt.largest_buffer_bytes);
    if (stt.f16_tensors)
        fprintf(f, "precision f16: %llu float activations stored as halves, %llu as float32 (out: "
                   "how each step's output is stored)\n", (unsigned long long)stt.f16_tensors,
                (unsigned long long)stt.f32_tensors);
    fprintf(f, "prologue (once): %d buffers made resident, %s MiB\n\n", pl->n_prologue / 2,
            mib(pl->resident_bytes, a));
    fprintf(f, "%4s %5s %-9s %10s %6s %10s %6s %10s %10s %3s  %s\n", "seg", "step", "kernel",
            "work MiB", "loads", "load MiB", "evict", "spill MiB", "in use MiB", "out", "node");
    uint64_t in_use = pl->resident_bytes, peak = in_use;
    int seg = 0, loads = 0, evict = 0;
    uint64_t load_b = 0, spill_b = 0;
    for (int i = 0; i < pl->n_actions; i++) {
        const pg_action *ac = &pl->actions[i];
        uint64_t sz = ac->buf >= 0 ? pg_size(pl, pb->buffers[ac->buf].bytes) : 0;
        switch (ac->kind) {
        case PA_ALLOC: in_use += sz; break;
        case PA_FREE: in_use -= sz; break;
        case PA_UPLOAD:
        case PA_RELOAD: loads++; load_b += pb->buffers[ac->buf].bytes; break;
        case PA_SPILL: evict++; spill_b += pb->buffers[ac->buf].bytes; break;
        case PA_DOWNLOAD: break;
        case PA_RUN: {
            if (in_use > peak)
                peak = in_use;
            if (loads || ac->step == 0)
                seg++;
            uint64_t ws = 0;
            int s = ac->step;
            for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
                int dup = 0;
                for (int j = pb->step_start[s]; j < k; j++)
                    dup |= pb->step_bufs[j] == pb->step_bufs[k];
                if (!dup)
                    ws += pg_size(pl, pb->buffers[pb->step_bufs[k]].bytes);
            }
            const ck_step *st = &p->steps[s];
            const core_tensor *ot = &p->tensors[core_storage(p, st->out)];
            fprintf(f, "%4d %5d %-9s %10s %6d %10s %6d %10s %10s %3s  %s\n", seg, s,
                    ck_kind_name(st->kind), mib(ws, a), loads, mib(load_b, b), evict,
                    mib(spill_b, c), mib(in_use, d),
                    ot->half ? "f16" : ot->dtype == SI_FLOAT32 ? "f32" : "i32",
                    si_model_node_name(m, st->node));
            loads = evict = 0;
            load_b = spill_b = 0;
            break;
        }
        }
    }
    fprintf(f, "\npeak GPU bytes in use %s MiB; arena %s MiB (the difference is fragmentation)\n",
            mib(peak, a), mib(pl->arena_bytes, b));
    if (p->has_dynamic)
        fprintf(f, "\nthis is GPU stage 1 of a model with parts the host interpreter runs (loops, "
                   "NonMaxSuppression, Where, ...): the GPU stages after them take shapes only the "
                   "interpreter computes, so they cannot be planned here; a run plans them in the "
                   "same budget and refuses a budget one of them cannot meet, naming it\n");
    return SI_OK;
}
