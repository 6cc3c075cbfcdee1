// ggml-backward.c - automatic differentiation on graphs.
//
// Gradients live on the graph: cgraph->grads[i] / cgraph->grad_accs[i] belong to
// the tensor in visited_hash_set.keys[i]. lm_ggml_build_backward_expand appends
// to the forward graph the nodes that compute, for every node on a path from a
// parameter to the loss, the gradient of the loss with respect to it.
//
// Gradient accumulators are persistent tensors (in ctx_static) that the
// backward nodes add into in place: always for the loss (graph_reset sets it to
// 1), and for the parameters when accumulating over several computations (a
// computed parameter's accumulator is added to after its gradient is complete,
// so that its sources get this computation's gradient). All other gradients
// are ordinary, freshly computed tensors of ctx_compute.
#include "../base/ggml-impl.h"

#include <stdlib.h>


// ---------------------------------------------------------------- gradient accumulation helpers
//
// Each helper records a contribution to the gradient of the tensor in slot isrc:
// the first contribution becomes the gradient (unless an accumulator already
// holds it), later ones are summed. Summing happens in place only into an
// accumulator, so that every other gradient stays an ordinary graph node.

struct bw_state {
    struct lm_ggml_context * ctx;
    struct lm_ggml_cgraph  * g;
    const bool * needed;      // per hash slot: the tensor depends on a parameter
};

static void grad_publish(struct bw_state * s, size_t isrc) {
    struct lm_ggml_tensor * src = s->g->visited_hash_set.keys[isrc];
    lm_ggml_format_name(s->g->grads[isrc], "grad for %s", src->name);
    lm_ggml_build_forward_expand(s->g, s->g->grads[isrc]);
}

static void grad_add(struct bw_state * s, size_t isrc, struct lm_ggml_tensor * t) {
    struct lm_ggml_tensor ** gr = &s->g->grads[isrc];
    if (*gr == NULL) {
        *gr = t;
    } else if (s->g->grad_accs[isrc] != NULL) {
        *gr = lm_ggml_add_inplace(s->ctx, *gr, t);
    } else {
        *gr = lm_ggml_add(s->ctx, *gr, t);
    }
    grad_publish(s, isrc);
}

// t is a scalar to add to every element
static void grad_add1(struct bw_state * s, size_t isrc, struct lm_ggml_tensor * t) {
    struct lm_ggml_tensor ** gr = &s->g->grads[isrc];
    if (*gr == NULL) {
        *gr = lm_ggml_repeat(s->ctx, t, s->g->visited_hash_set.keys[isrc]);
    } else if (s->g->grad_accs[isrc] != NULL) {
        *gr = lm_ggml_add1_inplace(s->ctx, *gr, t);
    } else {
        *gr = lm_ggml_add1(s->ctx, *gr, t);
    }
    grad_publish(s, isrc);
}

static void grad_sub(struct bw_state * s, size_t isrc, struct lm_ggml_tensor * t) {
    struct lm_ggml_tensor ** gr = &s->g->grads[isrc];
    if (*gr == NULL) {
        *gr = lm_ggml_neg(s->ctx, t);
    } else if (s->g->grad_accs[isrc] != NULL) {
        *gr = lm_ggml_sub_inplace(s->ctx, *gr, t);
    } else {
        *gr = lm_ggml_sub(s->ctx, *gr, t);
    }
    grad_publish(s, isrc);
}

// t is added into the region (nb1, nb2, nb3, offset) of the gradient
static void grad_acc(struct bw_state * s, size_t isrc, struct lm_ggml_tensor * t,
        size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    struct lm_ggml_tensor ** gr = &s->g->grads[isrc];
    if (*gr == NULL) {
        // zeros shaped like the source; NaN/inf in the source would leak through
        // (as in ggml)
        struct lm_ggml_tensor * zero = lm_ggml_scale(s->ctx, s->g->visited_hash_set.keys[isrc], 0.0f);
        *gr = lm_ggml_acc(s->ctx, zero, t, nb1, nb2, nb3, offset);
    } else if (s->g->grad_accs[isrc] != NULL) {
        *gr = lm_ggml_acc_inplace(s->ctx, *gr, t, nb1, nb2, nb3, offset);
    } else {
        *gr = lm_ggml_acc(s->ctx, *gr, t, nb1, nb2, nb3, offset);
    }
    grad_publish(s, isrc);
}

// Sums t over the dimensions where it is larger than like (which tiles into it).
static struct lm_ggml_tensor * unbroadcast(struct bw_state * s, struct lm_ggml_tensor * t, struct lm_ggml_tensor * like) {
    return lm_ggml_are_same_shape(t, like) ? t : lm_ggml_repeat_back(s->ctx, t, like);
}

// A data-less tensor that only carries a shape (for repeat_back's target).
static struct lm_ggml_tensor * shape_only(struct lm_ggml_context * ctx, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const bool no_alloc = lm_ggml_get_no_alloc(ctx);
    lm_ggml_set_no_alloc(ctx, true);
    struct lm_ggml_tensor * t = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, ne0, ne1, ne2, ne3);
    lm_ggml_set_no_alloc(ctx, no_alloc);
    return t;
}

// mul_mat broadcasts src0 over the batch dims of src1 in blocks: batch i2 of
// src1 uses batch i2 / (ne12/ne02) of src0 (likewise for dim 3). The gradient
// for src0 computed per src1 batch is summed over each such block.
static struct lm_ggml_tensor * mul_mat_unbroadcast(struct bw_state * s, struct lm_ggml_tensor * t, struct lm_ggml_tensor * src0) {
    const int64_t nm = t->ne[0] * t->ne[1];
    const int64_t q1 = src0->ne[2], r1 = src0->ne[3];
    const int64_t k2 = t->ne[2] / q1, k3 = t->ne[3] / r1;
    LM_GGML_ASSERT(t->ne[2] == q1*k2 && t->ne[3] == r1*k3);
    if (!lm_ggml_is_contiguous(t)) {
        t = lm_ggml_cont(s->ctx, t);
    }
    if (k2 > 1) {
        // [nm, k2, q1, ne3]: sum over the k2 copies
        t = lm_ggml_reshape_4d(s->ctx, t, nm, k2, q1, t->ne[3]);
        t = lm_ggml_repeat_back(s->ctx, t, shape_only(s->ctx, nm, 1, q1, t->ne[3]));
    }
    if (k3 > 1) {
        // [nm*q1, k3, r1]: sum over the k3 copies
        t = lm_ggml_reshape_4d(s->ctx, t, nm*q1, k3, r1, 1);
        t = lm_ggml_repeat_back(s->ctx, t, shape_only(s->ctx, nm*q1, 1, r1, 1));
    }
    return lm_ggml_reshape(s->ctx, t, src0);
}

// ---------------------------------------------------------------- backward rules

// Which sources of node never receive a gradient (indices, shapes, or a
// piecewise-constant function).
static void ignored_sources(const struct lm_ggml_tensor * node, bool ignore[LM_GGML_MAX_SRC]) {
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        ignore[j] = false;
    }
    switch (node->op) {
        case LM_GGML_OP_IM2COL:       // the kernel only provides a shape
        case LM_GGML_OP_IM2COL_BACK:
            ignore[0] = true;
            break;
        case LM_GGML_OP_UNARY: {
            const enum lm_ggml_unary_op u = lm_ggml_get_unary_op(node);
            if (u == LM_GGML_UNARY_OP_SGN || u == LM_GGML_UNARY_OP_STEP) {
                ignore[0] = true;
            }
        } break;
        case LM_GGML_OP_CPY:          // the destination is overwritten
        case LM_GGML_OP_GET_ROWS:     // row indices
        case LM_GGML_OP_GET_ROWS_BACK:
        case LM_GGML_OP_ROPE:         // positions
            ignore[1] = true;
            break;
        default:
            break;
    }
}

static bool has_rule(const struct lm_ggml_tensor * node) {
    switch (node->op) {
        case LM_GGML_OP_NONE:
        case LM_GGML_OP_DUP: case LM_GGML_OP_ADD: case LM_GGML_OP_ADD1: case LM_GGML_OP_ACC:
        case LM_GGML_OP_SUB: case LM_GGML_OP_MUL: case LM_GGML_OP_DIV: case LM_GGML_OP_SQR:
        case LM_GGML_OP_SQRT: case LM_GGML_OP_LOG: case LM_GGML_OP_SIN: case LM_GGML_OP_COS:
        case LM_GGML_OP_SUM: case LM_GGML_OP_SUM_ROWS: case LM_GGML_OP_MEAN:
        case LM_GGML_OP_REPEAT: case LM_GGML_OP_REPEAT_BACK: case LM_GGML_OP_RMS_NORM:
        case LM_GGML_OP_MUL_MAT: case LM_GGML_OP_SCALE: case LM_GGML_OP_SET: case LM_GGML_OP_CPY:
        case LM_GGML_OP_CONT: case LM_GGML_OP_RESHAPE: case LM_GGML_OP_VIEW: case LM_GGML_OP_PERMUTE:
        case LM_GGML_OP_TRANSPOSE: case LM_GGML_OP_GET_ROWS: case LM_GGML_OP_DIAG_MASK_INF:
        case LM_GGML_OP_DIAG_MASK_ZERO: case LM_GGML_OP_SOFT_MAX: case LM_GGML_OP_ROPE:
        case LM_GGML_OP_IM2COL: case LM_GGML_OP_POOL_2D: case LM_GGML_OP_CROSS_ENTROPY_LOSS:
            return true;
        case LM_GGML_OP_UNARY:
            switch (lm_ggml_get_unary_op(node)) {
                case LM_GGML_UNARY_OP_ABS: case LM_GGML_UNARY_OP_SGN: case LM_GGML_UNARY_OP_NEG:
                case LM_GGML_UNARY_OP_STEP: case LM_GGML_UNARY_OP_RELU: case LM_GGML_UNARY_OP_SILU:
                case LM_GGML_UNARY_OP_EXP:
                    return true;
                default:
                    return false;
            }
        default:
            return false;
    }
}

static size_t slot_if_needed(const struct bw_state * s, const struct lm_ggml_tensor * src) {
    if (src == NULL) {
        return LM_GGML_HASHSET_FULL;
    }
    const size_t i = lm_ggml_hash_find(&s->g->visited_hash_set, src);
    if (i == LM_GGML_HASHSET_FULL || !lm_ggml_bitset_get(s->g->visited_hash_set.used, i) || !s->needed[i]) {
        return LM_GGML_HASHSET_FULL;
    }
    return i;
}

static void backward_node(struct bw_state * s, struct lm_ggml_tensor * node) {
    struct lm_ggml_tensor * grad = lm_ggml_graph_get_grad(s->g, node);
    if (grad == NULL) {
        return;
    }
    struct lm_ggml_context * ctx = s->ctx;
    struct lm_ggml_tensor * src0 = node->src[0];
    struct lm_ggml_tensor * src1 = node->src[1];
    struct lm_ggml_tensor * src2 = node->src[2];
    const size_t i0 = slot_if_needed(s, src0);
    const size_t i1 = slot_if_needed(s, src1);
    const size_t i2 = slot_if_needed(s, src2);
    const bool need0 = i0 != LM_GGML_HASHSET_FULL;
    const bool need1 = i1 != LM_GGML_HASHSET_FULL;
    const bool need2 = i2 != LM_GGML_HASHSET_FULL;

    switch (node->op) {
        case LM_GGML_OP_NONE:
            break;
        case LM_GGML_OP_DUP:
        case LM_GGML_OP_CPY:          // cpy: node = src0*1 + src1*0
            if (need0) {
                struct lm_ggml_tensor * t = grad;
                if (!lm_ggml_are_same_shape(t, src0)) {
                    // same number of elements, other shape (upstream ggml does not handle it)
                    t = lm_ggml_reshape(ctx, lm_ggml_is_contiguous(t) ? t : lm_ggml_cont(ctx, t), src0);
                }
                grad_add(s, i0, t);
            }
            break;
        case LM_GGML_OP_ADD:
            if (need0) grad_add(s, i0, grad);
            if (need1) grad_add(s, i1, unbroadcast(s, grad, src1));
            break;
        case LM_GGML_OP_ADD1:
            if (need0) grad_add(s, i0, grad);
            // ggml uses the mean here (its own TODO says it should be the
            // sum); kept for parity. Exact whenever src0 is a scalar.
            if (need1) grad_add(s, i1, lm_ggml_mean(ctx, grad));
            break;
        case LM_GGML_OP_ACC:
            if (need0) grad_add(s, i0, grad);
            if (need1) {
                const size_t nb1 = (size_t) lm_ggml_get_op_params_i32(node, 0);
                const size_t nb2 = (size_t) lm_ggml_get_op_params_i32(node, 1);
                const size_t nb3 = (size_t) lm_ggml_get_op_params_i32(node, 2);
                const size_t off = (size_t) lm_ggml_get_op_params_i32(node, 3);
                struct lm_ggml_tensor * region = lm_ggml_view_4d(ctx, grad,
                        src1->ne[0], src1->ne[1], src1->ne[2], src1->ne[3], nb1, nb2, nb3, off);
                grad_add(s, i1, lm_ggml_reshape(ctx, lm_ggml_cont(ctx, region), src1));
            }
            break;
        case LM_GGML_OP_SUB:
            if (need0) grad_add(s, i0, grad);
            if (need1) grad_sub(s, i1, unbroadcast(s, grad, src1));
            break;
        case LM_GGML_OP_MUL:
            // src1 may be broadcast over src0 (upstream ggml does not handle it)
            if (need0) grad_add(s, i0, lm_ggml_mul(ctx, grad, src1));
            if (need1) grad_add(s, i1, unbroadcast(s, lm_ggml_mul(ctx, src0, grad), src1));
            break;
        case LM_GGML_OP_DIV:
            if (need0) grad_add(s, i0, lm_ggml_div(ctx, grad, src1));
            if (need1) grad_sub(s, i1, unbroadcast(s, lm_ggml_mul(ctx, grad, lm_ggml_div(ctx, node, src1)), src1));
            break;
        case LM_GGML_OP_SQR:
            if (need0) grad_add(s, i0, lm_ggml_scale(ctx, lm_ggml_mul(ctx, src0, grad), 2.0f));
            break;
        case LM_GGML_OP_SQRT:
            if (need0) grad_add(s, i0, lm_ggml_scale(ctx, lm_ggml_div(ctx, grad, node), 0.5f));
            break;
        case LM_GGML_OP_LOG:
            if (need0) grad_add(s, i0, lm_ggml_div(ctx, grad, src0));
            break;
        case LM_GGML_OP_SIN:
            if (need0) grad_add(s, i0, lm_ggml_mul(ctx, grad, lm_ggml_cos(ctx, src0)));
            break;
        case LM_GGML_OP_COS:
            if (need0) grad_sub(s, i0, lm_ggml_mul(ctx, grad, lm_ggml_sin(ctx, src0)));
            break;
        case LM_GGML_OP_SUM:
            if (need0) grad_add1(s, i0, grad);
            break;
        case LM_GGML_OP_SUM_ROWS:
            if (need0) grad_add(s, i0, lm_ggml_repeat(ctx, grad, src0));
            break;
        case LM_GGML_OP_MEAN:
            if (need0) {
                struct lm_ggml_tensor * t = lm_ggml_scale(ctx, grad, 1.0f/(float) src0->ne[0]);
                if (lm_ggml_is_scalar(t)) {
                    grad_add1(s, i0, t);
                } else {
                    // one mean per row (ggml only handles a single row)
                    grad_add(s, i0, lm_ggml_repeat(ctx, t, src0));
                }
            }
            break;
        case LM_GGML_OP_REPEAT:
            if (need0) grad_add(s, i0, lm_ggml_repeat_back(ctx, grad, src0));
            break;
        case LM_GGML_OP_REPEAT_BACK:
            if (need0) grad_add(s, i0, lm_ggml_repeat(ctx, grad, src0));
            break;
        case LM_GGML_OP_RMS_NORM:
            if (need0) grad_add(s, i0, lm_ggml_rms_norm_back(ctx, src0, grad, lm_ggml_get_op_params_f32(node, 0)));
            break;
        case LM_GGML_OP_MUL_MAT:
            // node [m,p,qq,rr] = src0 [n,m,q1,r1] x src1 [n,p,qq,rr]
            if (need0) {
                struct lm_ggml_tensor * t = lm_ggml_out_prod(ctx, src1, grad); // [n,m,qq,rr]
                if (!lm_ggml_are_same_shape(t, src0)) {
                    t = mul_mat_unbroadcast(s, t, src0);                      // src0 broadcast over batches: upstream ggml does not handle it
                }
                grad_add(s, i0, t);
            }
            if (need1) {
                // transposing the (usually smaller) gradient instead of src0
                grad_add(s, i1, lm_ggml_out_prod(ctx, src0, lm_ggml_transpose(ctx, grad))); // [n,p,qq,rr]
            }
            break;
        case LM_GGML_OP_SCALE:
            if (need0) grad_add(s, i0, lm_ggml_scale(ctx, grad, lm_ggml_get_op_params_f32(node, 0)));
            break;
        case LM_GGML_OP_SET: {
            const size_t nb1 = (size_t) lm_ggml_get_op_params_i32(node, 0);
            const size_t nb2 = (size_t) lm_ggml_get_op_params_i32(node, 1);
            const size_t nb3 = (size_t) lm_ggml_get_op_params_i32(node, 2);
            const size_t off = (size_t) lm_ggml_get_op_params_i32(node, 3);
            if (!need0 && !need1) {
                break;
            }
            LM_GGML_ASSERT(src0->type == node->type);
            struct lm_ggml_tensor * region = lm_ggml_view_4d(ctx, grad,
                    src1->ne[0], src1->ne[1], src1->ne[2], src1->ne[3], nb1, nb2, nb3, off);
            if (need0) {
                // the overwritten region does not depend on src0: zero it
                grad_add(s, i0, lm_ggml_acc(ctx, grad, lm_ggml_neg(ctx, region), nb1, nb2, nb3, off));
            }
            if (need1) {
                grad_add(s, i1, lm_ggml_reshape(ctx, lm_ggml_cont(ctx, region), src1));
            }
        } break;
        case LM_GGML_OP_CONT:
            if (need0) {
                LM_GGML_ASSERT(s->g->grads[i0] == NULL || lm_ggml_is_contiguous(s->g->grads[i0]));
                LM_GGML_ASSERT(lm_ggml_is_contiguous(grad));
                grad_add(s, i0, grad);
            }
            break;
        case LM_GGML_OP_RESHAPE:
            if (need0) {
                struct lm_ggml_tensor * c = lm_ggml_is_contiguous(grad) ? grad : lm_ggml_cont(ctx, grad);
                grad_add(s, i0, lm_ggml_reshape(ctx, c, src0));
            }
            break;
        case LM_GGML_OP_VIEW:
            if (need0) {
                size_t off;
                memcpy(&off, node->op_params, sizeof(off));
                size_t nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
                struct lm_ggml_tensor * g0 = s->g->grads[i0];
                if (g0 != NULL && g0->type != src0->type) {
                    // byte offsets/strides are in units of src0's type; the gradient's type differs
                    const size_t es = lm_ggml_element_size(src0), eg = lm_ggml_element_size(g0);
                    LM_GGML_ASSERT(off % es == 0 && nb1 % es == 0 && nb2 % es == 0 && nb3 % es == 0);
                    off = off/es*eg; nb1 = nb1/es*eg; nb2 = nb2/es*eg; nb3 = nb3/es*eg;
                }
                grad_acc(s, i0, grad, nb1, nb2, nb3, off);
            }
            break;
        case LM_GGML_OP_PERMUTE:
            if (need0) {
                int inv[4] = { 0, 1, 2, 3 };
                for (int k = 0; k < 4; k++) {
                    inv[lm_ggml_get_op_params_i32(node, k) & 3] = k;
                }
                grad_add(s, i0, lm_ggml_permute(ctx, grad, inv[0], inv[1], inv[2], inv[3]));
            }
            break;
        case LM_GGML_OP_TRANSPOSE:
            if (need0) grad_add(s, i0, lm_ggml_transpose(ctx, grad));
            break;
        case LM_GGML_OP_GET_ROWS:
            if (need0) grad_add(s, i0, lm_ggml_get_rows_back(ctx, grad, src1, src0));
            break;
        case LM_GGML_OP_DIAG_MASK_INF:
        case LM_GGML_OP_DIAG_MASK_ZERO:
            // masked entries are constants: their gradient is zero
            if (need0) grad_add(s, i0, lm_ggml_diag_mask_zero(ctx, grad, lm_ggml_get_op_params_i32(node, 0)));
            break;
        case LM_GGML_OP_SOFT_MAX:
            LM_GGML_ASSERT(!need1 && "backward pass for the soft_max mask is not implemented");
            if (need0) {
                struct lm_ggml_tensor * t = lm_ggml_soft_max_back(ctx, grad, node);
                const float scale = lm_ggml_get_op_params_f32(node, 0);
                if (scale != 1.0f && scale != 0.0f) {
                    // soft_max_ext(x*scale): chain rule (ggml's rule ignores scale)
                    t = lm_ggml_scale(ctx, t, scale);
                }
                grad_add(s, i0, t);
            }
            break;
        case LM_GGML_OP_ROPE:
            LM_GGML_ASSERT(!need2 && "backward pass for rope frequency factors is not implemented");
            if (need0) {
                float fp[6];
                for (int k = 0; k < 6; k++) {
                    fp[k] = lm_ggml_get_op_params_f32(node, 5 + k);
                }
                grad_add(s, i0, lm_ggml_rope_back(ctx, grad, src1, src2,
                        lm_ggml_get_op_params_i32(node, 1), lm_ggml_get_op_params_i32(node, 2),
                        lm_ggml_get_op_params_i32(node, 4), fp[0], fp[1], fp[2], fp[3], fp[4], fp[5]));
            }
            break;
        case LM_GGML_OP_IM2COL:
            if (need1) {
                int32_t p[7];
                for (int k = 0; k < 7; k++) {
                    p[k] = lm_ggml_get_op_params_i32(node, k);
                }
                grad_add(s, i1, lm_ggml_im2col_back(ctx, src0, grad, src1->ne,
                        p[0], p[1], p[2], p[3], p[4], p[5], p[6] == 1));
            }
            break;
        case LM_GGML_OP_POOL_2D:
            if (need0) {
                int32_t p[7];
                for (int k = 0; k < 7; k++) {
                    p[k] = lm_ggml_get_op_params_i32(node, k);
                }
                grad_add(s, i0, lm_ggml_pool_2d_back(ctx, grad, src0, (enum lm_ggml_op_pool) p[0],
                        p[1], p[2], p[3], p[4], (float) p[5], (float) p[6]));
            }
            break;
        case LM_GGML_OP_UNARY:
            switch (lm_ggml_get_unary_op(node)) {
                case LM_GGML_UNARY_OP_ABS:
                    if (need0) grad_add(s, i0, lm_ggml_mul(ctx, lm_ggml_sgn(ctx, src0), grad));
                    break;
                case LM_GGML_UNARY_OP_NEG:
                    if (need0) grad_sub(s, i0, grad);
                    break;
                case LM_GGML_UNARY_OP_RELU:
                    if (need0) grad_add(s, i0, lm_ggml_mul(ctx, lm_ggml_step(ctx, src0), grad));
                    break;
                case LM_GGML_UNARY_OP_SILU:
                    if (need0) grad_add(s, i0, lm_ggml_silu_back(ctx, src0, grad));
                    break;
                case LM_GGML_UNARY_OP_EXP:
                    if (need0) grad_add(s, i0, lm_ggml_mul(ctx, node, grad));
                    break;
                case LM_GGML_UNARY_OP_SGN:
                case LM_GGML_UNARY_OP_STEP:
                    break; // piecewise constant
                default:
                    LM_GGML_ABORT("backward pass not implemented for unary op %s (tensor '%s')", lm_ggml_op_desc(node), node->name);
            }
            break;
        case LM_GGML_OP_CROSS_ENTROPY_LOSS:
            LM_GGML_ASSERT(!need1 && "backward pass for cross_entropy_loss labels is not implemented");
            if (need0) grad_add(s, i0, lm_ggml_cross_entropy_loss_back(ctx, src0, src1, grad));
            break;
        default:
            LM_GGML_ABORT("backward pass not implemented for op %s (tensor '%s')", lm_ggml_op_desc(node), node->name);
    }

    LM_GGML_ASSERT(!need0 || lm_ggml_are_same_shape(src0, s->g->grads[i0]));
    LM_GGML_ASSERT(!need1 || lm_ggml_are_same_shape(src1, s->g->grads[i1]));
    LM_GGML_ASSERT(!need2 || lm_ggml_are_same_shape(src2, s->g->grads[i2]));
}

// ---------------------------------------------------------------- build

// The per-slot scratch of the build in progress on this thread. An assert
// inside the build may longjmp out (Go arms LM_GGML_TRY), so the next build
// frees what such an interrupted one left behind.
static _Thread_local void * bw_scratch;

void lm_ggml_build_backward_expand(struct lm_ggml_context * ctx_static, struct lm_ggml_context * ctx_compute,
        struct lm_ggml_cgraph * cgraph, bool accumulate) {
    LM_GGML_ASSERT(cgraph != NULL && cgraph->n_nodes > 0 && "build_backward_expand: the graph is empty");
    LM_GGML_ASSERT(cgraph->grads != NULL && cgraph->grad_accs != NULL &&
            "build_backward_expand: the graph has no room for gradients (create it with grads = true)");

    const int n_fwd = cgraph->n_nodes;
    {
        bool any_params = false, any_loss = false;
        for (int i = 0; i < n_fwd; i++) {
            any_params = any_params || (cgraph->nodes[i]->flags & LM_GGML_TENSOR_FLAG_PARAM);
            any_loss   = any_loss   || (cgraph->nodes[i]->flags & LM_GGML_TENSOR_FLAG_LOSS);
        }
        LM_GGML_ASSERT(any_params && "no trainable parameters found, did you forget to call lm_ggml_set_param?");
        LM_GGML_ASSERT(any_loss && "no training loss found, did you forget to call lm_ggml_set_loss?");
    }

    const size_t hs = cgraph->visited_hash_set.size;
    free(bw_scratch);
    bw_scratch = calloc(2*hs*sizeof(bool) + hs*sizeof(struct lm_ggml_tensor *), 1);
    LM_GGML_ASSERT(bw_scratch != NULL && "out of memory");
    // the accumulators of computed parameters, until their gradient is complete
    struct lm_ggml_tensor ** deferred = bw_scratch;
    bool * needed = (bool *) (deferred + hs); // depends on a parameter (or is the loss)
    bool * reached = needed + hs;             // will receive a gradient

    // forward pass: which nodes need a gradient
    for (int i = 0; i < n_fwd; i++) {
        struct lm_ggml_tensor * node = cgraph->nodes[i];
        if (node->type == LM_GGML_TYPE_I32) {
            continue;
        }
        bool need = (node->flags & (LM_GGML_TENSOR_FLAG_PARAM | LM_GGML_TENSOR_FLAG_LOSS)) != 0;
        bool ignore[LM_GGML_MAX_SRC];
        ignored_sources(node, ignore);
        for (int j = 0; j < LM_GGML_MAX_SRC && !need; j++) {
            struct lm_ggml_tensor * src = node->src[j];
            if (src == NULL || ignore[j] || !needed[lm_ggml_hash_find(&cgraph->visited_hash_set, src)]) {
                continue;
            }
            LM_GGML_ASSERT((src->type == LM_GGML_TYPE_F32 || src->type == LM_GGML_TYPE_F16) &&
                    "backward pass: only f32/f16 tensors can depend on trainable parameters");
            need = true;
        }
        if (!need) {
            continue;
        }
        LM_GGML_ASSERT((!node->view_src || node->op == LM_GGML_OP_CPY || node->op == LM_GGML_OP_VIEW ||
                node->op == LM_GGML_OP_RESHAPE || node->op == LM_GGML_OP_PERMUTE || node->op == LM_GGML_OP_TRANSPOSE) &&
                "backward pass: in-place operations are not supported");
        const size_t k = lm_ggml_hash_find(&cgraph->visited_hash_set, node);
        LM_GGML_ASSERT(k != LM_GGML_HASHSET_FULL && lm_ggml_bitset_get(cgraph->visited_hash_set.used, k));
        needed[k] = true;
        if (node->flags & LM_GGML_TENSOR_FLAG_LOSS) {
            reached[k] = true;
        }
    }

    // Fail on an op without a backward rule before anything is built.
    for (int i = n_fwd - 1; i >= 0; i--) {
        struct lm_ggml_tensor * node = cgraph->nodes[i];
        const size_t k = lm_ggml_hash_find(&cgraph->visited_hash_set, node);
        if (!reached[k]) {
            continue;
        }
        if (!has_rule(node)) {
            free(bw_scratch);
            bw_scratch = NULL;
            LM_GGML_ABORT("backward pass not implemented for op %s (tensor '%s')", lm_ggml_op_desc(node), node->name);
        }
        bool ignore[LM_GGML_MAX_SRC];
        ignored_sources(node, ignore);
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            struct lm_ggml_tensor * src = node->src[j];
            if (src == NULL || ignore[j]) {
                continue;
            }
            const size_t ks = lm_ggml_hash_find(&cgraph->visited_hash_set, src);
            if (needed[ks]) {
                reached[ks] = true;
            }
        }
    }

    memset(cgraph->grads,     0, hs * sizeof(struct lm_ggml_tensor *));
    memset(cgraph->grad_accs, 0, hs * sizeof(struct lm_ggml_tensor *));
    for (int i = 0; i < n_fwd; i++) {
        struct lm_ggml_tensor * node = cgraph->nodes[i];
        const size_t k = lm_ggml_hash_find(&cgraph->visited_hash_set, node);
        if (!needed[k]) {
            continue;
        }
        if ((node->flags & LM_GGML_TENSOR_FLAG_LOSS) || (accumulate && (node->flags & LM_GGML_TENSOR_FLAG_PARAM))) {
            struct lm_ggml_tensor * acc = lm_ggml_dup_tensor(ctx_static, node);
            lm_ggml_format_name(acc, "grad acc for %s", node->name);
            cgraph->grad_accs[k] = acc;
            cgraph->grads[k]     = acc;
            if (!(node->flags & LM_GGML_TENSOR_FLAG_LOSS) && node->op != LM_GGML_OP_NONE) {
                // a computed parameter passes on this computation's gradient
                // to its sources, not the sum over earlier ones: the
                // accumulator is added to once that gradient is complete
                cgraph->grad_accs[k] = NULL;
                cgraph->grads[k]     = NULL;
                deferred[k] = acc;
            }
        }
    }

    struct bw_state s = { ctx_compute, cgraph, needed };
    for (int i = n_fwd - 1; i >= 0; i--) {
        struct lm_ggml_tensor * node = cgraph->nodes[i];
        const size_t k = lm_ggml_hash_find(&cgraph->visited_hash_set, node);
        backward_node(&s, node);
        if (needed[k] && deferred[k] != NULL) {
            struct lm_ggml_tensor * fresh = cgraph->grads[k];
            cgraph->grad_accs[k] = deferred[k];
            cgraph->grads[k] = fresh != NULL ? lm_ggml_add_inplace(ctx_compute, deferred[k], fresh) : deferred[k];
            grad_publish(&s, k);
        }
    }

    free(bw_scratch);
    bw_scratch = NULL;
}
