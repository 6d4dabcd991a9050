"""Python hooks of hooks.contract.yaml: they record the order in which the engine calls them."""

CALLS: list[str] = []


def pre_check(input):
    CALLS.append("pre")
    return True


def act(input):
    CALLS.append("act")
    return {"text": input.text.strip()}


def post_check(input, output, act):
    CALLS.append("post")
    if output.summary == "bad":
        return False, "the summary says bad"
    return None
