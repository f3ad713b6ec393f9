from django import forms


class ConsentForm(forms.Form):
    """The consent page's answer: the button pressed. Anything unexpected counts as a refusal."""

    ALLOW = "allow"
    DENY = "deny"

    decision = forms.ChoiceField(choices=[(ALLOW, "Allow"), (DENY, "Deny")])
