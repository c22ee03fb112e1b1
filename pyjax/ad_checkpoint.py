"""Public jax.ad_checkpoint: checkpoint (remat) with its policies, checkpoint_name to tag
values for the policies, and print_saved_residuals to see what a backward pass keeps.
Re-exports only; the code lives in pyjax._src.api.checkpoint."""
from pyjax._src.api.checkpoint import (  # noqa: F401
    checkpoint, checkpoint_name, checkpoint_policies, print_saved_residuals, remat,
    saved_residuals,
)
