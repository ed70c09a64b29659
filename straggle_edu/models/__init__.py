"""The models layer: samplers, the step-time and cluster model, the pipeline
schedule and the mitigation models. Takes an ``rng``, returns arrays or
frozen dataclasses; imports only the math layer, numpy and scipy."""
